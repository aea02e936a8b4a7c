#!/usr/bin/env bash
# Run right after httpd starts or restarts (gracefully or not): CLIENTS clients at once each open CONNECTIONS
# new TLS connections to the site on this machine (127.0.0.1 only), verify its certificate, and count the
# handshakes that failed. Any failure ends the check with status 1: the server's first users would see it.
# Usage: check-cold-start.sh SERVER_NAME. Environment: CA_FILE (PEM, required), PORT (443), CLIENTS (16, at
# most 64), CONNECTIONS (25 per client, at most 200), SIGALGS (optional: the signature schemes to offer, as
# openssl s_client -sigalgs takes them).
set -euo pipefail

name="${1:-}"
if [[ ! "$name" =~ ^[A-Za-z0-9.-]+$ ]]; then
  echo "Give the site's server name (the name its certificate carries), for example www.example.com." >&2
  exit 2
fi
port="${PORT:-443}" clients="${CLIENTS:-16}" each="${CONNECTIONS:-25}"
[[ "$port" =~ ^[1-9][0-9]*$ ]] || { echo "PORT must be a port number, not '$port'." >&2; exit 2; }
if [[ ! "$clients" =~ ^[1-9][0-9]*$ ]] || ((clients > 64)); then
  echo "CLIENTS must be a number from 1 to 64, not '$clients'." >&2
  exit 2
fi
if [[ ! "$each" =~ ^[1-9][0-9]*$ ]] || ((each > 200)); then
  echo "CONNECTIONS must be a number from 1 to 200, not '$each'." >&2
  exit 2
fi
: "${CA_FILE:?set CA_FILE to the PEM file of the CA that signed the server certificate}"
[[ -r "$CA_FILE" ]] || { echo "Cannot read CA_FILE=$CA_FILE." >&2; exit 1; }
for tool in openssl timeout; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (package openssl or coreutils)." >&2; exit 1; }
done
sigalgs=()
if [[ -n "${SIGALGS:-}" ]]; then sigalgs=(-sigalgs "$SIGALGS"); fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One client: EACH connections one after another, each a full handshake (no session is offered back). A line
# per connection: "ok", or "failed: " and openssl's first error line.
client() {
  local i out
  for ((i = 1; i <= each; i++)); do
    if out=$(timeout 30 openssl s_client -connect "127.0.0.1:$port" -servername "$name" -CAfile "$CA_FILE" \
      -verify_return_error -brief "${sigalgs[@]}" </dev/null 2>&1); then
      echo ok
    else
      echo "failed: $(printf '%s\n' "$out" | grep -m 1 -i 'error' || printf '%s\n' "$out" | tail -n 1)"
    fi
  done
}

for ((c = 1; c <= clients; c++)); do client >"$work/$c" & done
wait

total=$((clients * each))
failed=$(cat "$work"/* | grep -c '^failed' || true)
echo "$((total - failed)) of $total new TLS connections completed ($clients clients at once, $each each)."
if ((failed > 0)); then
  echo "$failed handshakes failed; the first: $(cat "$work"/* | grep -m 1 '^failed' | cut -c 9-)" >&2
  echo "Look in httpd's error log (LogLevel ssl:info shows the TLS library's errors)." >&2
  exit 1
fi
