#!/usr/bin/env bash
# Proves that a TLS server still offers the hybrid post-quantum key exchange: a TLS 1.3 client that offers only
# X25519MLKEM768 gets a handshake with it. A Groups line from which the hybrid group was dropped fails, although
# every classical client still connects. Run as any user, with OpenSSL 3.5 or later (the first with that group):
#   bash check-hybrid-group.sh HOST:PORT
# SERVER_NAME (optional): the name to ask for (SNI) when HOST is not the certificate's name. SIGALGS (optional):
# the signature schemes to offer (the first list, as for the key check). GROUP (optional): the group to ask for.
# Exit status: 0 the server agreed to the group; 1 it did not; 5 cannot tell (this openssl has no such group).
set -euo pipefail

die() { echo "check-hybrid-group: $*" >&2; exit 1; }
[[ $# -eq 1 && $1 == *:* ]] || die "usage: $0 HOST:PORT"
target=$1 group=${GROUP:-X25519MLKEM768}
command -v openssl >/dev/null || die "openssl is missing: install openssl."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
read -r -a lists <<<"${SIGALGS:-}"
sig=()
[[ -z ${lists[0]:-} ]] || sig=(-sigalgs "${lists[0]}")

said=$(timeout 20 openssl s_client -connect "$target" -servername "${SERVER_NAME:-${target%:*}}" -tls1_3 \
  -groups "$group" "${sig[@]}" -brief </dev/null 2>&1 || true)
if grep -qiE "(failed to set|error setting) groups|unknown group|Call to SSL_CONF_cmd\(-groups" <<<"$said"; then
  echo "check-hybrid-group: cannot tell: this openssl ($(openssl version)) has no group $group; run the check" \
    "with OpenSSL 3.5 or later." >&2
  exit 5
fi
if grep -qx "Negotiated TLS1.3 group: $group" <<<"$said"; then
  echo "$target agrees to the key exchange $group over TLS 1.3."
  exit 0
fi
die "$target does not agree to $group over TLS 1.3 (it answered: $(grep -m 1 -iE 'alert|error|group' <<<"$said" ||
  echo 'no handshake')): put $group first in its Groups line, and check that its OpenSSL is 3.5 or later."
