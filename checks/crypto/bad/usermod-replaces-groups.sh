#!/usr/bin/env bash
# negates: crypto/pkcs11-group/add-user-to-pkcs11-group.sh
# checker: testinfra
# rejects: the study's usermod -G kept the other groups after all
# test: checks/crypto/test_pkcs11_group.py::test_the_studys_usermod_drops_the_users_other_groups
# checker: testinfra
# rejects: did what the corrected form does
# test: checks/errata/test_errata.py::test_state_changing_checker_rejects_the_studys_form
# The 2013 study's "add the wasadmin user to the pkcs11 group": without -a, usermod -G REPLACES the
# user's supplementary groups with pkcs11 alone.
set -euo pipefail
usermod -G pkcs11 wasadmin
