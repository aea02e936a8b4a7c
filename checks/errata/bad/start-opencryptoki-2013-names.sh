#!/usr/bin/env bash
# The 2013 study's names for openCryptoki's set-up script and slot daemon (SLES 11), as it prints them.
# openCryptoki 3 has neither: the daemon is pkcsslotd (pkcsslotd.service) and needs no set-up script.
pkcs11_startup
rcpkcs11d start
