#!/usr/bin/env bash
# Connects to a TLS server once, then TRIES more times offering that session back, over TLS 1.2 and TLS 1.3,
# and counts the connections the server resumed ("Reused") and those that needed a full handshake ("New").
# Usage: check-session-resumption.sh HOST:PORT [SERVER_NAME]. Environment: CA_FILE (PEM), TRIES (default 4),
# SIGALGS (optional: the signature schemes to offer, one OpenSSL -sigalgs list per certificate the server has,
# separated by spaces, as "rsa_pss_rsae_sha256 ECDSA+SHA256" for an RSA and an ECDSA key; each is checked).
set -euo pipefail

target="${1:-}"
if [[ ! "$target" =~ ^[^:/]+:[0-9]+$ ]]; then
  echo "Give the server as HOST:PORT, for example www.example.com:443." >&2
  exit 2
fi
name="${2:-${target%:*}}"
tries="${TRIES:-4}"
[[ "$tries" =~ ^[1-9][0-9]*$ ]] || { echo "TRIES must be a positive number, not '$tries'." >&2; exit 2; }
: "${CA_FILE:?set CA_FILE to the PEM file of the CA that signed the server certificate}"
[[ -r "$CA_FILE" ]] || { echo "Cannot read CA_FILE=$CA_FILE." >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is not installed (package openssl)." >&2; exit 1; }
read -r -a lists <<<"${SIGALGS:-}"
((${#lists[@]})) || lists=("")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One connection: send a request and wait for the answer (TLS 1.3 session tickets arrive after the
# handshake), then print s_client's "New, ..." or "Reused, ..." line and any ticket lifetime hint.
connect() {
  local proto="$1"
  shift
  printf 'HEAD / HTTP/1.0\r\nHost: %s\r\n\r\n' "$name" |
    timeout 30 openssl s_client -connect "$target" -servername "$name" -CAfile "$CA_FILE" \
      -verify_return_error -ign_eof "${sigalgs[@]}" "$proto" "$@" 2>&1 |
    grep -E '^(New|Reused), |lifetime hint' || true
}

none_resumed="no session was resumed: the server has no session cache and takes no session tickets"
none_resumed+=" (or they expire at once)."
failed=0
for offer in "${lists[@]}"; do
  sigalgs=()
  [[ -z $offer ]] || sigalgs=(-sigalgs "$offer")
  for proto in -tls1_2 -tls1_3; do
    label="TLSv1.${proto#-tls1_}"
    ((${#lists[@]} == 1)) || label+=" ($offer)"
    rm -f "$work/session.pem"
    first=$(connect "$proto" -sess_out "$work/session.pem")
    if [[ "$first" != New,* ]]; then
      echo "$label: the TLS handshake failed; run openssl s_client -connect $target $proto to see why." >&2
      failed=1
      continue
    fi
    echo "$label: first connection: ${first%%$'\n'*}"
    if [[ ! -s "$work/session.pem" ]]; then
      echo "$label: the server gave no session to resume (no session ID, no session ticket)."
      echo "$label: $none_resumed" >&2
      failed=1
      continue
    fi
    reused=0 new=0
    for ((i = 1; i <= tries; i++)); do
      line=$(connect "$proto" -sess_in "$work/session.pem" -sess_out "$work/next.pem" | head -n 1)
      if [[ -s "$work/next.pem" ]]; then mv "$work/next.pem" "$work/session.pem"; fi
      case "$line" in
        Reused,*) reused=$((reused + 1)) ;;
        *) new=$((new + 1)) ;;
      esac
    done
    hint=$(printf '%s\n' "$first" | sed -n 's/.*lifetime hint: \([0-9]*\).*/\1/p' | head -n 1)
    echo "$label: $reused of $tries reconnections resumed the session (Reused), $new needed a full handshake (New)."
    if [[ -n "$hint" ]]; then echo "$label: session ticket lifetime hint from the server: $hint s."; fi
    if ((reused == 0)); then
      echo "$label: $none_resumed" >&2
      failed=1
    fi
  done
done
exit "$failed"
