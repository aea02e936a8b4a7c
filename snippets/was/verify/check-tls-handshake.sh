#!/usr/bin/env bash
# Connects to WebSphere's HTTPS port with curl and shows the negotiated protocol, cipher suite and certificate.
# Usage: check-tls-handshake.sh HOST:PORT [PATH]. Environment: CA_FILE, the CA (or self-signed) certificate in PEM.
set -euo pipefail

target="${1:-}"
path="${2:-/}"
if [[ ! "$target" =~ ^[^:/]+:[0-9]+$ ]]; then
  echo "Give the server as HOST:PORT, for example wasnode1.example.com:9443." >&2
  exit 2
fi
: "${CA_FILE:?set CA_FILE to the PEM file of the certificate that signed the server certificate}"
[[ -r "$CA_FILE" ]] || { echo "Cannot read CA_FILE=$CA_FILE." >&2; exit 1; }

command -v curl >/dev/null || { echo "curl is missing: install curl." >&2; exit 1; }
# curl -v writes the handshake to stderr; keep the lines that answer the questions.
if ! out=$(curl -sS -v -o /dev/null --cacert "$CA_FILE" "https://$target$path" 2>&1); then
  printf '%s\n' "$out" | grep -E '^\* (TLS|SSL|OpenSSL|curl|Connected|.*error)' >&2 || true
  echo "The TLS connection to $target failed (see above)." >&2
  exit 1
fi
printf '%s\n' "$out" | grep -E '^\* (SSL connection using|Server certificate:)|^\*  (subject|issuer|expire date|SSL certificate verify)'
