#!/usr/bin/env bash
# Proves that a site tells browsers to use HTTPS only: its answer over TLS carries a Strict-Transport-Security
# header with a max-age of at least one year (what testssl.sh and the SSL Labs rating require for A+). One TLS
# connection with certificate checking, one HEAD request; it changes nothing on the server. Run as any user:
#   bash check-hsts.sh HOST:PORT [SERVER_NAME]
# CA_FILE: the PEM file of the CA that signed the server certificate. SIGALGS (optional): the signature schemes to
# offer (the first list, as for the key check). Exit status: 0 the header is there for a year or more, 1 it is
# missing or shorter, or the connection failed (said which), 2 bad input.
set -euo pipefail

die() { echo "check-hsts: $*" >&2; exit "${2:-1}"; }
target="${1:-}"
[[ "$target" =~ ^[^:/]+:[0-9]+$ ]] || die "give the server as HOST:PORT, for example www.example.com:443." 2
name="${2:-${target%:*}}"
: "${CA_FILE:?set CA_FILE to the PEM file of the CA that signed the server certificate}"
[[ -r "$CA_FILE" ]] || die "cannot read CA_FILE=$CA_FILE."
command -v openssl >/dev/null || die "openssl is missing: install openssl."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
read -r -a lists <<<"${SIGALGS:-}"
sig=()
[[ -z ${lists[0]:-} ]] || sig=(-sigalgs "${lists[0]}")

said=$(printf 'HEAD / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$name" |
  timeout 30 openssl s_client -connect "$target" -servername "$name" -CAfile "$CA_FILE" -verify_return_error \
    -quiet -ign_eof "${sig[@]}" 2>&1 || true)
status=$(grep -m 1 -E '^HTTP/1\.[01] [0-9]{3}' <<<"$said" || true)
[[ -n $status ]] ||
  die "no HTTP answer over TLS from $target: $(grep -m 1 -i 'error' <<<"$said" || echo 'the connection failed')."
header=$(grep -i -m 1 '^Strict-Transport-Security:' <<<"$said" | tr -d '\r' || true)
[[ -n $header ]] || die "$target ($name) answers without a Strict-Transport-Security header: add
  Header always set Strict-Transport-Security \"max-age=63072000\" to the site (mod_headers)."
age=$(sed -n 's/.*max-age=\([0-9]*\).*/\1/ip' <<<"$header")
[[ -n $age ]] || die "$target ($name) sends '$header' without a max-age."
((age >= 31536000)) || die "$target ($name) sends max-age=$age: less than one year (31536000 s)."
echo "$target ($name): ${header#*: } (${status%$'\r'})"
