#!/usr/bin/env bash
# List the certificates in the openCryptoki token and show the server certificate's details.
# Needs TOKEN_USER_PIN in the environment and pkcsslotd running; the library defaults to openCryptoki's
# on RHEL, SLES, Ubuntu or Debian.
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
CERT_LABEL="${CERT_LABEL:-ihscert}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

# openCryptoki's library where RHEL/SLES and Ubuntu/Debian install it, unless PKCS11_LIB names another.
RHEL_SLES_LIB=/usr/lib64/opencryptoki/libopencryptoki.so
UBUNTU_DEBIAN_LIB="/usr/lib/$(uname -m)-linux-gnu/pkcs11/libopencryptoki.so"
if [ -z "${PKCS11_LIB:-}" ]; then
    if [ -f "$RHEL_SLES_LIB" ]; then PKCS11_LIB=$RHEL_SLES_LIB; else PKCS11_LIB=$UBUNTU_DEBIAN_LIB; fi
fi

if [ ! -x "$IHS_ROOT/bin/gskcapicmd" ]; then
    echo "gskcapicmd is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi
if [ ! -f "$PKCS11_LIB" ]; then
    echo "openCryptoki's library $PKCS11_LIB does not exist (RHEL/SLES have $RHEL_SLES_LIB, Ubuntu/Debian $UBUNTU_DEBIAN_LIB): install openCryptoki or set PKCS11_LIB" >&2
    exit 1
fi

"$IHS_ROOT/bin/gskcapicmd" -cert -list -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" -pw "$TOKEN_USER_PIN"
"$IHS_ROOT/bin/gskcapicmd" -cert -details -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL"
