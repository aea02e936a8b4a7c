#!/usr/bin/env bash
# The study's self-signed certificate in the ICA token with gskcmd, corrected (CN, library, one command).
# Needs TOKEN_USER_PIN in the environment and pkcsslotd running; PKCS11_LIB defaults to the library path of
# SLES, the study's system (set it on another distribution).
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
PKCS11_LIB="${PKCS11_LIB:-/usr/lib64/opencryptoki/libopencryptoki.so}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
CERT_LABEL="${CERT_LABEL:-ihscert}"
SERVER_NAME="${SERVER_NAME:-wasnode1.net}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

if [ ! -x "$IHS_ROOT/bin/gskcmd" ]; then
    echo "gskcmd is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi
command -v pgrep >/dev/null || { echo "pgrep is missing: install procps." >&2; exit 1; }
if ! pgrep -x pkcsslotd >/dev/null; then
    echo "pkcsslotd is not running: start it (rcpkcsslotd start on SLES 11)" >&2
    exit 1
fi
if "$IHS_ROOT/bin/gskcmd" -cert -details -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
        -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL" >/dev/null 2>&1; then
    echo "certificate $CERT_LABEL exists in token $TOKEN_LABEL already: keeping it"
    exit 0
fi

"$IHS_ROOT/bin/gskcmd" -cert -create -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL" -dn "CN=$SERVER_NAME,O=IBM,C=DE" -size 4096
