#!/usr/bin/env bash
# Generate httpd's RSA key pair inside the openCryptoki token, store the PIN file, and write a CSR for your CA.
# Run as root. Environment: TOKEN_USER_PIN; optional TOKEN_LABEL, KEY_LABEL, SERVER_NAME, APACHE_GROUP, PKCS11_LIB.
set -euo pipefail

TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
KEY_LABEL="${KEY_LABEL:-apachekey}"
SERVER_NAME="${SERVER_NAME:-www.example.com}"
APACHE_GROUP="${APACHE_GROUP:-www-data}"
PKCS11_LIB="${PKCS11_LIB:-/usr/lib64/opencryptoki/libopencryptoki.so}"
PIN_FILE="${PIN_FILE:-/etc/ssl/private/apache-token.pin}"
OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
CSR="${CSR:-/etc/ssl/$SERVER_NAME.csr}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

[[ $EUID -eq 0 ]] || { echo "Run this as root: it writes under /etc/ssl." >&2; exit 1; }
command -v pkcs11-tool >/dev/null || { echo "pkcs11-tool is missing: install opensc." >&2; exit 1; }
[[ -f "$PKCS11_LIB" ]] || { echo "openCryptoki library $PKCS11_LIB not found: set PKCS11_LIB." >&2; exit 1; }
[[ -f "$OPENSSL_PKCS11_CONF" ]] ||
    { echo "$OPENSSL_PKCS11_CONF is missing: install the OpenSSL configuration for pkcs11-provider first." >&2; exit 1; }
getent group "$APACHE_GROUP" >/dev/null ||
    { echo "Group $APACHE_GROUP does not exist: set APACHE_GROUP to httpd's group (apache, www, www-data)." >&2; exit 1; }

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
