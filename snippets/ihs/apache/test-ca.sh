#!/usr/bin/env bash
# A private test CA, to try the TLS pages before your own CA has signed a certificate. For tests only: no client
# trusts it until you give it the CA certificate, and the CA's key is a file on this machine.
# Usage: test-ca.sh ca              create the CA (if there is none) and print its certificate's path
#        test-ca.sh certificate     a new key (a file) and a certificate for SERVER_NAME, where the sites name them
#        test-ca.sh sign CSR [CERT] a certificate for a request, e.g. the one the token page's key step writes,
#                                   in CERT (default: where the sites name it, /etc/ssl/certs/SERVER_NAME.crt)
# Environment: SERVER_NAME (default www.example.com), CA_DIR (default /root/test-ca). Run as root.
set -euo pipefail

SERVER_NAME="${SERVER_NAME:-www.example.com}"
CA_DIR="${CA_DIR:-/root/test-ca}"
CERT="/etc/ssl/certs/$SERVER_NAME.crt"
KEY="/etc/ssl/private/$SERVER_NAME.key"

usage() { echo "Usage: $0 ca | certificate | sign CSR [CERT]" >&2; exit 2; }
mode="${1:-}"
case "$mode" in
  ca | certificate) (($# == 1)) || usage ;;
  sign) (($# == 2 || $# == 3)) || usage; [[ -r "$2" ]] || { echo "Cannot read the certificate request $2." >&2; exit 1; }
        CERT="${3:-$CERT}" ;;
  *) usage ;;
esac
[[ $EUID -eq 0 ]] || { echo "Run this as root: it writes under /etc/ssl." >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is missing: install the openssl package." >&2; exit 1; }
[[ "$SERVER_NAME" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]] ||
  { echo "SERVER_NAME='$SERVER_NAME' is not a host name." >&2; exit 2; }

# The CA outlives the certificates it signs (a year against 90 days): a CA that ends first stops them all.
if [[ ! -s "$CA_DIR/ca.crt" ]]; then
  install -d -m 0700 "$CA_DIR"
  (umask 077 && openssl req -x509 -newkey rsa:2048 -noenc -keyout "$CA_DIR/ca.key" -out "$CA_DIR/ca.crt" \
    -days 365 -subj "/CN=zrunbook test CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null)
  chmod 0644 "$CA_DIR/ca.crt"
fi

# sign CSR: a server certificate for 90 days (the Mozilla profiles check lifetimes), the name as subjectAltName.
# An RSA key may also encipher (TLS 1.2's RSA key exchange); an EC key only signs (RFC 5480).
sign() {
  local usage=digitalSignature,keyEncipherment
  [[ $(openssl req -in "$1" -noout -text 2>/dev/null) == *"Public Key Algorithm: id-ecPublicKey"* ]] &&
    usage=digitalSignature
  openssl x509 -req -in "$1" -CA "$CA_DIR/ca.crt" -CAkey "$CA_DIR/ca.key" -days 90 -out "$CERT" \
    -extfile <(printf '%s\n' "subjectAltName=DNS:$SERVER_NAME" extendedKeyUsage=serverAuth \
      "keyUsage=critical,$usage" authorityKeyIdentifier=keyid) 2>/dev/null
  chmod 0644 "$CERT"
  echo "certificate for $SERVER_NAME: $CERT"
}

case "$mode" in
  certificate)
    install -d -m 0700 /etc/ssl/private
    csr=$(mktemp)
    trap 'rm -f "$csr"' EXIT
    (umask 077 && openssl req -new -newkey rsa:2048 -noenc -keyout "$KEY" -subj "/CN=$SERVER_NAME" \
      -out "$csr" 2>/dev/null)
    echo "key: $KEY"
    sign "$csr"
    ;;
  sign) sign "$2" ;;
esac
echo "test CA certificate (give it to clients, e.g. as CA_FILE): $CA_DIR/ca.crt"
