#!/usr/bin/env bash
# Starts a Liberty server whose keystore is the openCryptoki token and waits until its HTTPS port listens,
# or stops with the server's own message when the keystore cannot be opened:
#   TOKEN_USER_PIN=... bash start-server.sh [SERVER]     (as the user the server runs as, a member of pkcs11)
# WLP_DIR is Liberty's install folder (default /opt/ibm/wlp); WLP_USER_DIR and WLP_OUTPUT_DIR are honoured.
# A wrong PIN costs one of the token's login attempts at every start: fix it before starting again.
set -euo pipefail

server=${1:-tokensrv}
wlp=${WLP_DIR:-/opt/ibm/wlp}
die() { echo "start-server: $*" >&2; exit 1; }
[ -x "$wlp/bin/server" ] || die "no Liberty in $wlp: set WLP_DIR to its install folder."
[ -n "${TOKEN_USER_PIN:-}" ] || die "set TOKEN_USER_PIN to the token's user PIN (from your secret store, not a file in the server)."
command -v pkcsconf >/dev/null || die "pkcsconf is missing: install openCryptoki (opencryptoki)."
pkcsconf -s >/dev/null 2>&1 || die "pkcsslotd does not answer this user: start it and add $(id -un) to the pkcs11 group."

log="${WLP_OUTPUT_DIR:-${WLP_USER_DIR:-$wlp/usr}/servers}/$server/logs/messages.log"
rm -f "$log"
"$wlp/bin/server" start "$server" >/dev/null
for _ in $(seq 120); do
  if [ -f "$log" ] && grep -q 'CWPKI0814E\|CWPKI0809W' "$log"; then
    grep -o 'CWPKI0814E.*' "$log" >&2 || grep -o 'CWPKI0809W.*' "$log" >&2
    "$wlp/bin/server" stop "$server" >/dev/null 2>&1 || true
    die "the keystore in the token could not be opened; the server is stopped."
  fi
  if [ -f "$log" ] && grep -q 'CWWKO0219I.*-ssl' "$log"; then
    grep -o 'CWWKF0011I.*' "$log" || true
    grep -o 'CWWKO0219I.*-ssl.*' "$log"
    exit 0
  fi
  sleep 1
done
die "no HTTPS listener after 120 seconds: see $log."
