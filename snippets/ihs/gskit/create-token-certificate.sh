#!/usr/bin/env bash
# Create a self-signed server certificate whose private key is generated in the openCryptoki token.
# Needs TOKEN_USER_PIN in the environment and pkcsslotd running; labels and names default to this chapter's.
# Other GSKit users (WebSEAL) run it with GSKCAPICMD naming their gsk8capicmd_64 and their own labels.
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
GSKCAPICMD="${GSKCAPICMD:-$IHS_ROOT/bin/gskcapicmd}"
PKCS11_LIB="${PKCS11_LIB:-/usr/lib64/opencryptoki/libopencryptoki.so}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
CERT_LABEL="${CERT_LABEL:-ihscert}"
SERVER_NAME="${SERVER_NAME:-www.example.com}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

if [ ! -x "$GSKCAPICMD" ]; then
    echo "GSKit's command line is not at $GSKCAPICMD: set IHS_ROOT to the IBM HTTP Server installation, or GSKCAPICMD to the program" >&2
    exit 1
fi
if [ ! -f "$PKCS11_LIB" ]; then
    echo "openCryptoki library $PKCS11_LIB not found: install openCryptoki or set PKCS11_LIB" >&2
    exit 1
fi
if ! pgrep -x pkcsslotd >/dev/null; then
    echo "pkcsslotd is not running: start it (systemctl start pkcsslotd)" >&2
    exit 1
fi
if "$GSKCAPICMD" -cert -list -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
        -pw "$TOKEN_USER_PIN" | grep -qw -- "$CERT_LABEL"; then
    echo "certificate $CERT_LABEL exists in token $TOKEN_LABEL already: keeping it"
    exit 0
fi

"$GSKCAPICMD" -cert -create -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL" -dn "CN=$SERVER_NAME,O=Example,C=DE" \
    -san_dnsname "$SERVER_NAME" -size 2048 -sig_alg SHA256_WITH_RSA -expire 365
"$GSKCAPICMD" -cert -details -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL"
