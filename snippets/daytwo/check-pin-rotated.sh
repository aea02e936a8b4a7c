#!/usr/bin/env bash
# Proves that a token's user PIN was changed: the new PIN logs in, the old one is refused, and the good login that
# follows clears the failed login the old one counted. Shows the token's flags after each login. It spends that one
# failed login on purpose, so it starts only when the flags show none counted, and logs in with the new PIN first.
# Run as the token administrator (a member of pkcs11) or root, with the PINs in the environment (or asked for,
# without echo, on a terminal):
#   TOKEN_USER_PIN=... OLD_TOKEN_USER_PIN=... bash check-pin-rotated.sh    optional: TOKEN_LABEL (IBMICATOK)
# Run as root, it logs in and reads the flags as zrprobe, a system user in group pkcs11 only, never as root: every
# login rewrites the token's NVTOK.DAT, and as root that follows a link a pkcs11 member planted (CVE-2026-23893).
# Exit status: 0 rotated; 1 not (or the check could not run, or the flags showed a failed login already).
set -euo pipefail

TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
die() { echo "check-pin-rotated: $*" >&2; exit 1; }
# openCryptoki's tools are in /usr/sbin, which an ordinary login's PATH lacks on Debian and Ubuntu; the system's
# folders first, so that no tool of the same name elsewhere (/usr/local) gets the PIN.
PATH="/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}"
for tool in pkcsconf p11sak; do
  command -v "$tool" >/dev/null || die "$tool is missing: install openCryptoki."
done
# The token tools: as this user, or from root as zrprobe (group pkcs11 only) (a member's rights, not root's).
if ((EUID == 0)); then
  command -v setpriv >/dev/null || die "setpriv is missing: install util-linux."
  getent group pkcs11 | cut -d: -f4 | tr , '\n' | grep -qx zrprobe ||
    die "there is no user zrprobe listed in group pkcs11, as whom the token tools run from root: the slot daemon's" \
      "step (start-pkcsslotd.sh) makes it, or: useradd --system --no-create-home --shell /usr/sbin/nologin --groups pkcs11 zrprobe"
  tok() { setpriv --reuid=zrprobe --regid=pkcs11 --clear-groups -- "$@"; }
else
  tok() { "$@"; }
fi
for name in TOKEN_USER_PIN OLD_TOKEN_USER_PIN; do
  [[ -n ${!name:-} ]] && continue
  [[ -t 0 ]] || die "set $name: there is no terminal to ask on."
  read -rs -p "$name: " "${name?}"; echo >&2
done
[[ $TOKEN_USER_PIN != "$OLD_TOKEN_USER_PIN" ]] || die "TOKEN_USER_PIN and OLD_TOKEN_USER_PIN are the same PIN."

slot=$({ tok pkcsconf -t 2>/dev/null || true; } | awk -v want="$TOKEN_LABEL" '
    /^Token #[0-9]+ Info:/ { slot = substr($2, 2) }
    /^[[:space:]]*Label:/  { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, "")
                             if ($0 == want) { print slot; exit } }')
[[ -n $slot ]] || die "no token labelled $TOKEN_LABEL in 'pkcsconf -t': is pkcsslotd running, and are you in pkcs11?"
# pkcsconf ends the names with "|", a backspace and ")": shown here as a terminal shows it.
flags_line() { tok pkcsconf -t -c "$slot" 2>/dev/null | tr -d '\b' | sed -n 's/^[[:space:]]*\(Flags:.*\)/\1/p' | sed 's/|)$/)/'; }
flags() { flags_line | sed -n 's/^Flags:[[:space:]]*0x\([0-9A-Fa-f]*\).*/\1/p'; }
logs_in() { PKCS11_USER_PIN="$1" tok p11sak list-key private --slot "$slot" >/dev/null 2>&1; }

f=$(flags)
[[ -n $f ]] || die "pkcsconf -t -c $slot shows no flags."
((16#$f & 0x70000)) && die "not logging in: token $TOKEN_LABEL already counts a failed login ($(flags_line)). Find" \
  "who holds a wrong PIN first, then clear the count with clear-pin-count.sh (at USER_PIN_FINAL_TRY no httpd login" \
  "clears it)."
echo "token $TOKEN_LABEL, slot $slot"
echo "before:                     $(flags_line)"
logs_in "$TOKEN_USER_PIN" ||
  die "token $TOKEN_LABEL refuses the new PIN in TOKEN_USER_PIN ($(flags_line)): was the PIN changed? One failed" \
    "login is counted; the next good login clears it."
echo "the new PIN logs in:        $(flags_line)"
if logs_in "$OLD_TOKEN_USER_PIN"; then
  die "token $TOKEN_LABEL still takes the old PIN too: the PIN was not changed on this token."
fi
echo "the old PIN is refused:     $(flags_line)"
((16#$(flags) & 0x10000)) || die "the old PIN was refused, but the token did not count it ($(flags_line))."
logs_in "$TOKEN_USER_PIN" || die "the new PIN no longer logs in ($(flags_line))."
echo "the new PIN logs in again:  $(flags_line)"
((16#$(flags) & 0x70000)) && die "the good login did not clear the count ($(flags_line))."
echo "rotated: token $TOKEN_LABEL takes the new user PIN and refuses the old one; no failed login is left counted."
