#!/usr/bin/env bash
# Create a self-signed server certificate whose private key is generated in the openCryptoki token.
# Needs TOKEN_USER_PIN in the environment and pkcsslotd running; labels and names default to this chapter's,
# the library to openCryptoki's on RHEL, SLES, Ubuntu or Debian.
# Other GSKit users (WebSEAL) run it with GSKCAPICMD naming their gsk8capicmd_64 and their own labels.
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
GSKCAPICMD="${GSKCAPICMD:-$IHS_ROOT/bin/gskcapicmd}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
CERT_LABEL="${CERT_LABEL:-ihscert}"
SERVER_NAME="${SERVER_NAME:-www.example.com}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

# openCryptoki's library where RHEL/SLES and Ubuntu/Debian install it, unless PKCS11_LIB names another.
RHEL_SLES_LIB=/usr/lib64/opencryptoki/libopencryptoki.so
UBUNTU_DEBIAN_LIB="/usr/lib/$(uname -m)-linux-gnu/pkcs11/libopencryptoki.so"
if [ -z "${PKCS11_LIB:-}" ]; then
    if [ -f "$RHEL_SLES_LIB" ]; then PKCS11_LIB=$RHEL_SLES_LIB; else PKCS11_LIB=$UBUNTU_DEBIAN_LIB; fi
fi

if [ ! -x "$GSKCAPICMD" ]; then
    echo "GSKit's command line is not at $GSKCAPICMD: set IHS_ROOT to the IBM HTTP Server installation, or GSKCAPICMD to the program" >&2
    exit 1
fi
if [ ! -f "$PKCS11_LIB" ]; then
    echo "openCryptoki's library $PKCS11_LIB does not exist (RHEL/SLES have $RHEL_SLES_LIB, Ubuntu/Debian $UBUNTU_DEBIAN_LIB): install openCryptoki or set PKCS11_LIB" >&2
    exit 1
fi
command -v pkcsconf >/dev/null || { echo "pkcsconf is missing: install openCryptoki." >&2; exit 1; }
if ! pkcsconf -s >/dev/null 2>&1; then
    echo "pkcsslotd is not running or does not answer this shell: start it (systemctl start pkcsslotd)" >&2
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
