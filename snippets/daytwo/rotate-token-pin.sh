#!/usr/bin/env bash
# Change the user PIN of the openCryptoki token that Apache httpd's key is in, write the new PIN to the PIN file
# that httpd's OpenSSL configuration names, and stop and start httpd with it. Run as root: root writes the PIN file
# and stops and starts httpd; the token tools run as the token administrator, TOKEN_ADMIN (a member of pkcs11, not
# root; default SUDO_USER): before openCryptoki 3.27 a root-run token tool follows a link a pkcs11 member planted in
# the token folders (CVE-2026-23893).
# Environment: TOKEN_USER_PIN (the current PIN) and NEW_TOKEN_USER_PIN; each is asked for, without echo, when it
# is not set and a terminal is there. Optional: TOKEN_LABEL (IBMICATOK), OPENSSL_PKCS11_CONF
# (/etc/ssl/openssl-pkcs11.conf), SERVER_NAME (www.example.com), PORT (443).
set -euo pipefail

TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
SERVER_NAME="${SERVER_NAME:-www.example.com}" PORT="${PORT:-443}"

die() { echo "rotate-token-pin: $*" >&2; exit 1; }
[[ $EUID -eq 0 ]] || die "run this as root: it writes httpd's PIN file and stops and starts httpd."
for tool in pkcsconf p11sak openssl ps; do
  command -v "$tool" >/dev/null || die "$tool is missing: install openCryptoki, openssl and procps."
done
TOKEN_ADMIN="${TOKEN_ADMIN:-${SUDO_USER:-}}"
[[ -n $TOKEN_ADMIN && $TOKEN_ADMIN != root ]] || die "set TOKEN_ADMIN to the token administrator, a member of pkcs11" \
  "other than root: this step runs the token tools as that user, never as root."
id -nG "$TOKEN_ADMIN" 2>/dev/null | tr ' ' '\n' | grep -qx pkcs11 || die "$TOKEN_ADMIN is not a member of the group" \
  "pkcs11 (or no such user): add the token administrator with the crypto chapter's step."
command -v runuser >/dev/null || die "runuser is missing: install util-linux."
# A token tool as the token administrator, from / (root's working folder may be closed to that user).
as_admin() { (cd / && runuser -u "$TOKEN_ADMIN" -- "$@"); }
ctl=$(command -v apachectl || command -v apache2ctl || true)
[[ -n $ctl ]] || die "apachectl is missing: this step is for an Apache httpd whose key is in the token."

# The PINs: from the environment, else asked for (never on a command line, never printed).
ask() {
  [[ -t 0 ]] || die "set $1 ($2): there is no terminal to ask on."
  local first second
  read -rs -p "$2: " first; echo >&2
  read -rs -p "$2 again: " second; echo >&2
  [[ $first == "$second" ]] || die "the two entries of $2 differ: nothing was changed."
  printf -v "$1" '%s' "$first"
}
[[ -n ${TOKEN_USER_PIN:-} ]] || ask TOKEN_USER_PIN "the current user PIN of token $TOKEN_LABEL"
[[ -n ${NEW_TOKEN_USER_PIN:-} ]] || ask NEW_TOKEN_USER_PIN "the new user PIN of token $TOKEN_LABEL"
[[ $NEW_TOKEN_USER_PIN != "$TOKEN_USER_PIN" ]] || die "the new PIN is the current one: nothing to change."
[[ $NEW_TOKEN_USER_PIN != *[[:space:]]* ]] || die "the new PIN has a blank or a line break: a PIN file keeps one line."

# The PIN file httpd reads: the one its OpenSSL configuration names (pkcs11-module-token-pin = file:PATH).
[[ -r $OPENSSL_PKCS11_CONF ]] || die "$OPENSSL_PKCS11_CONF does not exist: set OPENSSL_PKCS11_CONF to httpd's OPENSSL_CONF."
pin_uri=$(sed -n 's/^[[:space:]]*pkcs11-module-token-pin[[:space:]]*=[[:space:]]*//p' "$OPENSSL_PKCS11_CONF" | tail -n 1)
[[ $pin_uri == file:/* ]] || die "$OPENSSL_PKCS11_CONF names no PIN file (pkcs11-module-token-pin = file:/PATH)."
pin_file=${pin_uri#file:}
[[ -d $(dirname "$pin_file") ]] || die "the folder of the PIN file $pin_file does not exist."

# The token: its slot, its flags (read without a login) and the PIN lengths it takes.
info=$(as_admin pkcsconf -t 2>/dev/null || true)
slot=$(awk -v want="$TOKEN_LABEL" '
    /^Token #[0-9]+ Info:/ { slot = substr($2, 2) }
    /^[[:space:]]*Label:/  { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, "")
                             if ($0 == want) { print slot; exit } }' <<<"$info")
[[ -n $slot ]] || die "no token labelled $TOKEN_LABEL in 'pkcsconf -t': is pkcsslotd running?"
token=$(as_admin pkcsconf -t -c "$slot" 2>/dev/null)
flags() { as_admin pkcsconf -t -c "$slot" 2>/dev/null | sed -n 's/^[[:space:]]*Flags:[[:space:]]*0x\([0-9A-Fa-f]*\).*/\1/p'; }
f=$(flags)
((16#$f & 0x40000)) && die "the user PIN of token $TOKEN_LABEL is locked: its security officer must set a new one" \
  "(pkcsconf -c $slot -u), which this step cannot do."
((16#$f & 0x20000)) && die "token $TOKEN_LABEL shows USER_PIN_FINAL_TRY: one more wrong PIN locks it, and httpd's" \
  "pkcs11-provider cancels every new login. Find who holds a wrong PIN first, then clear the flag with" \
  "clear-pin-count.sh as the token administrator; this step logs in only once the flag is gone."
# At USER_PIN_COUNT_LOW one more wrong PIN sets USER_PIN_FINAL_TRY, and no httpd login clears that: make no login.
((16#$f & 0x10000)) && die "token $TOKEN_LABEL shows USER_PIN_COUNT_LOW: a wrong user PIN was entered since the" \
  "last good login, and one more sets USER_PIN_FINAL_TRY, at which httpd's pkcs11-provider cancels every new login." \
  "Find who holds a wrong PIN, clear the count with clear-pin-count.sh as the token administrator, then run this" \
  "again. Nothing was changed; no login was made."
read -r min max < <(sed -n 's/^[[:space:]]*PIN Length:[[:space:]]*\([0-9]*\)-\([0-9]*\).*/\1 \2/p' <<<"$token") || true
[[ -n ${min:-} ]] || die "pkcsconf -t shows no PIN length for slot $slot."
((${#NEW_TOKEN_USER_PIN} >= min && ${#NEW_TOKEN_USER_PIN} <= max)) ||
  die "the new PIN has ${#NEW_TOKEN_USER_PIN} characters; token $TOKEN_LABEL takes $min to $max. Nothing was changed."

# 1. The current PIN, with one login before httpd is touched (the flags showed no failed login): a wrong one costs
# one failed login, not the site.
logs_in() { PKCS11_USER_PIN="$1" as_admin p11sak list-key private --slot "$slot" >/dev/null 2>&1; }
logs_in "$TOKEN_USER_PIN" || die "token $TOKEN_LABEL refused the current PIN in TOKEN_USER_PIN (flags now" \
  "0x$(flags): one failed login is counted, USER_PIN_COUNT_LOW). Nothing was changed; httpd was not touched. Clear" \
  "the count with clear-pin-count.sh and the right PIN before you run this again: it makes no login at that flag."

# 2. httpd stops first. Its parent process read the PIN once, when it started, and passes it to every worker it
# starts: after the change, each new worker (a graceful reload makes new ones) would log in with the old PIN and
# count a failed login, and three lock the token. So: stop, change, write the file, start.
# (a process that ended but was not reaped yet, state Z, no longer runs)
running() { grep -q '^[^Z]' <<<"$(ps -o stat= -C apache2,httpd 2>/dev/null || true)"; }
# Under systemd (RHEL, SLES, Ubuntu, Debian) through its unit, so that systemd knows; else apachectl (a container).
unit=
if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
  for candidate in apache2.service httpd.service; do
    systemctl is-active --quiet "$candidate" && { unit=$candidate; break; }
  done
fi
httpd_do() { if [[ -n $unit ]]; then systemctl "$1" "$unit"; else "$ctl" "$1"; fi; }
was_running=no
if running; then
  was_running=yes
  httpd_do stop
  for _ in $(seq 100); do running || break; sleep 0.2; done
  running && die "httpd did not stop within 20 s: the PIN was not changed."
fi
# Start httpd, wait until it listens (up to 30 s), then one TLS handshake must complete: no retry that could hide a
# worker whose login failed.
start_httpd() {
  [[ $was_running == yes ]] || return 0
  httpd_do start || return 1
  for _ in $(seq 60); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    sleep 0.5
  done
  openssl s_client -connect "127.0.0.1:$PORT" -servername "$SERVER_NAME" </dev/null >/dev/null 2>&1
}

# 3. The change: pkcsconf -p (C_SetPIN) with the PINs on its standard input (its prompts), then proof by a login
# with the new PIN (pkcsconf's exit status is 0 even when the token refuses the new PIN).
said=$(printf '%s\n%s\n%s\n' "$TOKEN_USER_PIN" "$NEW_TOKEN_USER_PIN" "$NEW_TOKEN_USER_PIN" |
  as_admin pkcsconf -c "$slot" -p 2>&1 >/dev/null) || true
if ! logs_in "$NEW_TOKEN_USER_PIN"; then
  start_httpd || true
  die "token $TOKEN_LABEL did not take the new PIN (pkcsconf said: ${said:-nothing}); the current PIN stays, and" \
    "httpd was started again with its PIN file unchanged."
fi

# 4. The PIN file, replaced in one step (a file beside it, renamed): root's alone, as httpd's page keeps it.
tmp=$(mktemp "$pin_file.XXXXXX")
(umask 077 && printf '%s' "$NEW_TOKEN_USER_PIN" >"$tmp")
chown root:root "$tmp"
chmod 0600 "$tmp"
mv -f "$tmp" "$pin_file"

# 5. httpd starts with the new PIN; a TLS handshake proves that a worker logged in and signed in the token.
start_httpd || die "the PIN is changed and $pin_file holds it, but httpd completed no TLS handshake on port $PORT" \
  "after its start: look in its error log."
f=$(flags)
((16#$f & 0x70000)) && die "the PIN is changed and httpd serves, but token $TOKEN_LABEL shows flags 0x$f: someone" \
  "else logged in with a wrong PIN meanwhile (another service with the old PIN?)."
echo "token $TOKEN_LABEL (slot $slot): user PIN changed, $pin_file holds the new PIN."
if [[ $was_running == yes ]]; then
  echo "httpd restarted and serves on port $PORT with it; token flags 0x$f."
else
  echo "httpd was not running: it reads the new PIN when it starts."
fi
# Other programs that have openCryptoki loaded still hold the old PIN and log in with it when they restart.
others=()
for maps in /proc/[0-9]*/maps; do
  pid=${maps#/proc/}; pid=${pid%/maps}
  grep -q opencryptoki "$maps" 2>/dev/null || continue
  name=$(cat "/proc/$pid/comm" 2>/dev/null || true)
  [[ -z $name || $name =~ ^(apache2|httpd|pkcsslotd)$ ]] || others+=("$name (pid $pid)")
done
if ((${#others[@]})); then
  echo "Also using openCryptoki, with the old PIN until they restart: ${others[*]}. Give each the new PIN" \
    "(Liberty: TOKEN_USER_PIN at its start), then restart it."
fi
