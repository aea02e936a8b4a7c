#!/usr/bin/env bash
# Generate httpd's RSA key pair inside the openCryptoki token, store the PIN file, and write a CSR for your CA.
# Run as root. Environment: TOKEN_USER_PIN; optional TOKEN_LABEL, KEY_LABEL, SERVER_NAME, and APACHE_GROUP and
# PKCS11_LIB, which default to httpd's group and openCryptoki's library on RHEL, SLES, Ubuntu and Debian.
set -euo pipefail

TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
KEY_LABEL="${KEY_LABEL:-apachekey}"
SERVER_NAME="${SERVER_NAME:-www.example.com}"
PIN_FILE="${PIN_FILE:-/etc/ssl/private/apache-token.pin}"
OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
CSR="${CSR:-/etc/ssl/$SERVER_NAME.csr}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

# httpd's group: apache (RHEL), www (SLES) or www-data (Ubuntu, Debian), whichever exists.
APACHE_GROUP="${APACHE_GROUP:-$(getent group apache www www-data | awk -F: 'NR == 1 {print $1}' || true)}"
# openCryptoki's library where RHEL/SLES and Ubuntu/Debian install it.
RHEL_SLES_LIB=/usr/lib64/opencryptoki/libopencryptoki.so
UBUNTU_DEBIAN_LIB="/usr/lib/$(uname -m)-linux-gnu/pkcs11/libopencryptoki.so"
if [[ -z "${PKCS11_LIB:-}" ]]; then
    if [[ -f "$RHEL_SLES_LIB" ]]; then PKCS11_LIB=$RHEL_SLES_LIB; else PKCS11_LIB=$UBUNTU_DEBIAN_LIB; fi
fi

[[ $EUID -eq 0 ]] || { echo "Run this as root: it writes under /etc/ssl." >&2; exit 1; }
command -v pkcs11-tool >/dev/null || { echo "pkcs11-tool is missing: install opensc." >&2; exit 1; }
[[ -f "$PKCS11_LIB" ]] || { echo "openCryptoki's library $PKCS11_LIB does not exist (RHEL/SLES have $RHEL_SLES_LIB," \
    "Ubuntu/Debian $UBUNTU_DEBIAN_LIB): install openCryptoki or set PKCS11_LIB." >&2; exit 1; }
[[ -f "$OPENSSL_PKCS11_CONF" ]] ||
    { echo "$OPENSSL_PKCS11_CONF is missing: install the OpenSSL configuration for pkcs11-provider first." >&2; exit 1; }
module=$(sed -n 's/^ *pkcs11-module-path *= *//p' "$OPENSSL_PKCS11_CONF")
[[ -f "$module" ]] || { echo "$OPENSSL_PKCS11_CONF names the library '$module', which does not exist here:" \
    "install the OpenSSL configuration for your distribution." >&2; exit 1; }
if [[ -z "$APACHE_GROUP" ]] || ! getent group "$APACHE_GROUP" >/dev/null; then
    echo "httpd's group ${APACHE_GROUP:-(apache, www or www-data)} does not exist: install httpd or set APACHE_GROUP." >&2
    exit 1
fi

# The PIN file: pkcs11-provider reads it in httpd's processes, so httpd's group may read it, no one else.
install -d -m 0710 -g "$APACHE_GROUP" "$(dirname "$PIN_FILE")"
(umask 077 && printf '%s' "$TOKEN_USER_PIN" > "$PIN_FILE")
chgrp "$APACHE_GROUP" "$PIN_FILE"
chmod 0640 "$PIN_FILE"

p11() { pkcs11-tool --module "$PKCS11_LIB" --token-label "$TOKEN_LABEL" --login --pin "$TOKEN_USER_PIN" "$@"; }
if p11 --list-objects --type privkey --label "$KEY_LABEL" 2>/dev/null | grep -q "label: *$KEY_LABEL\$"; then
    echo "key $KEY_LABEL exists in token $TOKEN_LABEL already: keeping it"
else
    p11 --keypairgen --key-type rsa:2048 --label "$KEY_LABEL" --usage-sign >/dev/null
    echo "generated RSA 2048 key pair $KEY_LABEL in token $TOKEN_LABEL"
fi

# SHA-512: the token hashes with CPACF where it can; the CA signs the certificate with its own hash anyway.
OPENSSL_CONF="$OPENSSL_PKCS11_CONF" openssl req -new -sha512 \
    -key "pkcs11:token=$TOKEN_LABEL;object=$KEY_LABEL;type=private" \
    -subj "/CN=$SERVER_NAME" -addext "subjectAltName=DNS:$SERVER_NAME" -out "$CSR"
echo "certificate request for $SERVER_NAME: $CSR (send it to your CA)"
