#!/usr/bin/env bash
# negates: ihs/gskit/*-2013.sh
# checker: gskit-cmd
# rejects: gskcmd -cert -create: option -label needs a value
# test: checks/ihs/test_gskit_snippets.py::test_validator_rejects_the_studys_gskcmd_line_broken_after_label
# Negative case: the study's gskcmd command as printed (000_1ab4cc40e3a5fd7a.txt, "IBM HTTP server
# certificate management"): the line breaks after -label, so -label has no value and "ihscert" starts
# a second command; the token PIN is a literal. The GSKit validator must reject it.
set -euo pipefail
gskcmd -cert -create -size 4096 -dn "CN=washnode1.net,O=IBM,C=DE" -label
ihscert -crypto /usr/lib/pkcs11/PKCS11_API.so64 -tokenlabel IBMICATOK -pw XXXX
