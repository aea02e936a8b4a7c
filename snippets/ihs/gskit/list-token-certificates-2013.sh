#!/usr/bin/env bash
# The study's check of the new certificate with gskcmd: its details as read from the ICA token.
# Needs TOKEN_USER_PIN in the environment and pkcsslotd running; PKCS11_LIB defaults to the library path of
# SLES, the study's system (set it on another distribution).
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
PKCS11_LIB="${PKCS11_LIB:-/usr/lib64/opencryptoki/libopencryptoki.so}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
CERT_LABEL="${CERT_LABEL:-ihscert}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

if [ ! -x "$IHS_ROOT/bin/gskcmd" ]; then
    echo "gskcmd is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi

"$IHS_ROOT/bin/gskcmd" -cert -details -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL"
