#!/usr/bin/env bash
# Create WebSEAL's self-signed server certificate with its private key generated in the openCryptoki token.
# Needs TOKEN_USER_PIN in the environment and pkcsslotd running; labels default to the webseald.conf entries.
set -euo pipefail

GSK8CAPICMD="${GSK8CAPICMD:-/usr/local/ibm/gsk8_64/bin/gsk8capicmd_64}"
PKCS11_LIB="${PKCS11_LIB:-/usr/lib64/opencryptoki/libopencryptoki.so}"
TOKEN_LABEL="${TOKEN_LABEL:-websealserver}"
CERT_LABEL="${CERT_LABEL:-webseal-server}"
SERVER_NAME="${SERVER_NAME:-webseal.example.com}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

if [ ! -x "$GSK8CAPICMD" ]; then
    echo "GSKit's gsk8capicmd_64 is not at $GSK8CAPICMD: install the GSKit that comes with WebSEAL or set GSK8CAPICMD" >&2
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
# The same command line as IBM HTTP Server's gskcapicmd: one name for both in this runbook.
function gskcapicmd { "$GSK8CAPICMD" "$@"; }

if gskcapicmd -cert -list -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
        -pw "$TOKEN_USER_PIN" | grep -qw -- "$CERT_LABEL"; then
    echo "certificate $CERT_LABEL exists in token $TOKEN_LABEL already: keeping it"
    exit 0
fi

gskcapicmd -cert -create -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL" -dn "CN=$SERVER_NAME,O=Example,C=DE" \
    -san_dnsname "$SERVER_NAME" -size 2048 -sig_alg SHA256_WITH_RSA -expire 365
gskcapicmd -cert -details -crypto "$PKCS11_LIB" -tokenlabel "$TOKEN_LABEL" \
    -pw "$TOKEN_USER_PIN" -label "$CERT_LABEL"
