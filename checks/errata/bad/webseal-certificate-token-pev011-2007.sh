#!/usr/bin/env bash
# negates: webseal/token/create-webseal-certificate.sh
# checker: webseal-labels
# rejects: token label: the certificate step creates 'pev011', webseald.conf
# test: checks/errata/test_errata.py::test_static_checker_rejects_the_studys_form
# The 2007 WebSEAL study's certificate step as its gsk7ikm figures show it, written as the runbook's wrapper:
# the certificate goes into token pev011, while webseald.conf and the token set-up name websealserver.
set -euo pipefail
IHS_SCRIPT="${IHS_SCRIPT:-$(dirname "$0")/create-token-certificate.sh}"
GSKCAPICMD="${GSKCAPICMD:-/usr/local/ibm/gsk8_64/bin/gsk8capicmd_64}"
TOKEN_LABEL="${TOKEN_LABEL:-pev011}"
CERT_LABEL="${CERT_LABEL:-leeds}"
SERVER_NAME="${SERVER_NAME:-pev011.pdl.pok.ibm.com}"
export GSKCAPICMD TOKEN_LABEL CERT_LABEL SERVER_NAME
exec bash "$IHS_SCRIPT"
