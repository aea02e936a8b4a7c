#!/usr/bin/env bash
# WebSEAL's server certificate in the openCryptoki token: the IHS chapter's create-token-certificate.sh,
# run with WebSEAL's GSKit program and the labels webseald.conf names. Needs TOKEN_USER_PIN in the
# environment; IHS_SCRIPT names the IHS chapter's script (default: beside this one).
set -euo pipefail

IHS_SCRIPT="${IHS_SCRIPT:-$(dirname "$0")/create-token-certificate.sh}"
GSKCAPICMD="${GSKCAPICMD:-/usr/local/ibm/gsk8_64/bin/gsk8capicmd_64}"
TOKEN_LABEL="${TOKEN_LABEL:-websealserver}"
CERT_LABEL="${CERT_LABEL:-webseal-server}"
SERVER_NAME="${SERVER_NAME:-webseal.example.com}"

if [ ! -f "$IHS_SCRIPT" ]; then
    echo "The IHS chapter's create-token-certificate.sh is not at $IHS_SCRIPT: download it beside this script or set IHS_SCRIPT" >&2
    exit 1
fi
export GSKCAPICMD TOKEN_LABEL CERT_LABEL SERVER_NAME
exec bash "$IHS_SCRIPT"
