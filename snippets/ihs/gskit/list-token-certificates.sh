#!/usr/bin/env bash
# List the certificates in the openCryptoki token and show the server certificate's details.
# Needs TOKEN_USER_PIN in the environment and pkcsslotd running.
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
PKCS11_LIB="${PKCS11_LIB:-/usr/lib64/opencryptoki/libopencryptoki.so}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
CERT_LABEL="${CERT_LABEL:-ihscert}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

if [ ! -x "$IHS_ROOT/bin/gskcapicmd" ]; then
    echo "gskcapicmd is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi

"$IHS_ROOT/bin/gskcapicmd" -cert -list -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" -pw "$TOKEN_USER_PIN"
"$IHS_ROOT/bin/gskcapicmd" -cert -details -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL"
