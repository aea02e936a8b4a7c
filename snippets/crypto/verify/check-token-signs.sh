#!/usr/bin/env bash
# Proves that a TLS server's handshakes sign in the openCryptoki token: opens COUNT new TLS connections and
# requires openCryptoki's own usage counters (pkcsstats) to show at least COUNT more RSA private-key
# operations by the server's user in the token's slot. On IBM Z with the ICA token each of them is a request
# to Crypto Express (lszcrypt -V shows the adapter's counter). Run as root, with the server's certificate or
# its CA in CA_FILE:
#   SERVICE_USER=wasadmin SLOT=1 CA_FILE=server.pem bash check-token-signs.sh HOST:PORT [COUNT]
# SERVER_NAME (optional): the name in the server's certificate when HOST is not that name (localhost on the
# server itself): curl then asks for https://SERVER_NAME:PORT/ and connects to HOST:PORT. SIGALGS (optional):
# the signature schemes curl offers, as OpenSSL lists them (needs curl 8.14 or later).
# Needs curl and pkcsstats (openCryptoki 3.18 or later, statistics not switched off in opencryptoki.conf).
set -euo pipefail

die() { echo "check-token-signs: $*" >&2; exit 1; }
[[ $# -ge 1 && $1 == *:* ]] || die "usage: SERVICE_USER=USER SLOT=N CA_FILE=PEM $0 HOST:PORT [COUNT]"
target=$1 count=${2:-5}
[[ $count =~ ^[1-9][0-9]*$ ]] || die "COUNT must be a positive number, not '$count'."
[[ -n ${SERVICE_USER:-} ]] || die "set SERVICE_USER to the user the server runs as."
[[ -n ${SLOT:-} ]] || die "set SLOT to the token's slot number (pkcsconf -s lists them)."
[[ -r ${CA_FILE:-} ]] || die "set CA_FILE to a PEM file with the server's certificate or its CA."
((EUID == 0)) || die "run as root: only root can read another user's counters (pkcsstats -U)."
for tool in curl pkcsstats; do
  command -v "$tool" >/dev/null || die "$tool is missing: install curl and openCryptoki 3.18 or later."
done

# The server user's RSA private-key operations in the slot: signatures and raw RSA, every key strength.
rsa_ops() {
  local out
  out=$(pkcsstats -U "$SERVICE_USER" -s "$SLOT" 2>&1) || {
    # No statistics yet for a user who has not used openCryptoki since the counters were created.
    [[ $out == *"No statistics are available"* ]] && { echo 0; return; }
    die "pkcsstats failed: $out"
  }
  awk -F'|' '$1 ~ /^CKM_(SHA[0-9_]*_)?RSA_(PKCS|PKCS_PSS|X_509) *$/ {
               n = split($2, c, " +"); for (i = 1; i <= n; i++) s += c[i] } END { print s + 0 }' <<<"$out"
}

url="https://$target/" connect=() sigalgs=()
[[ -z ${SIGALGS:-} ]] || sigalgs=(--sigalgs "$SIGALGS")
if [[ -n ${SERVER_NAME:-} ]]; then
  port=${target##*:}
  url="https://$SERVER_NAME:$port/" connect=(--connect-to "$SERVER_NAME:$port:$target")
fi
before=$(rsa_ops)
for i in $(seq "$count"); do
  said=$(curl -sS -o /dev/null --max-time 20 --cacert "$CA_FILE" "${connect[@]}" "${sigalgs[@]}" "$url" 2>&1) ||
    die "connection $i to $target ($url) failed: ${said:-curl failed}. Is the server up, and is SERVER_NAME the name in its certificate?"
done
after=$(rsa_ops)
grown=$((after - before))
if ((grown < count)); then
  die "$count new TLS connections, but $SERVICE_USER's RSA operations in slot $SLOT grew by $grown: the handshakes signed outside the token (a software key, or a provider that bypasses it)."
fi
echo "$count new TLS connections, $grown RSA private-key operations in slot $SLOT by $SERVICE_USER: the token signed."
