#!/usr/bin/env bash
# negates: crypto/opencryptoki/start-pkcsslotd.sh
# checker: testinfra
# rejects: pkcs11_startup: command not found
# test: checks/errata/test_errata.py::test_host_checker_rejects_the_studys_form
# The 2013 study's names for openCryptoki's set-up script and slot daemon (SLES 11), as it prints them.
# openCryptoki 3 has neither: the daemon is pkcsslotd (pkcsslotd.service) and needs no set-up script.
pkcs11_startup
rcpkcs11d start
