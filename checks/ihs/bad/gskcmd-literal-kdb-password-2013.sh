#!/usr/bin/env bash
# negates: ihs/gskit/*-2013.sh
# checker: gskit-cmd
# rejects: gskcmd -keydb -create: -pw must come from an environment variable
# test: checks/ihs/test_gskit_snippets.py::test_validator_rejects_the_studys_key_database_password_on_the_command_line
# Negative case: the study's key database command with the password typed on the command line
# (000_1ab4cc40e3a5fd7a.txt, "Create a CMS keystore for signer certificates"). Must be rejected.
set -euo pipefail
gskcmd -keydb -create -db /opt/IBM/HTTPServer/ssl/key.kdb -pw 1234 -type cms -expire 999 -stash
