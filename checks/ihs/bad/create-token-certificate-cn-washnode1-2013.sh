#!/usr/bin/env bash
# negates: ihs/gskit/create-token-certificate-2013.sh
# checker: gskit-httpd-consistency
# rejects: certificate CN and ServerName
# test: checks/ihs/test_gskit_snippets.py::test_consistency_check_reports_the_studys_certificate_cn_that_differs_from_servername
# Negative case: a valid gskcmd command with the study's CN typo (washnode1.net) while httpd.conf says
# ServerName wasnode1.net (000_1ab4cc40e3a5fd7a.txt). The consistency check must report it.
set -euo pipefail
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN}"
/opt/IBM/HTTPServer/bin/gskcmd -cert -create -crypto /usr/lib64/opencryptoki/libopencryptoki.so \
    -tokenlabel IBMICATOK -pw "$TOKEN_USER_PIN" -label ihscert -dn "CN=washnode1.net,O=IBM,C=DE" -size 4096
