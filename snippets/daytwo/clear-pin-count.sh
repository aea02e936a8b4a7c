#!/usr/bin/env bash
# Clear a token's failed-login count (USER_PIN_COUNT_LOW, USER_PIN_FINAL_TRY) with one login with the good user PIN,
# once whoever held a wrong PIN is stopped. pkcs11-provider (httpd's key in the token) refuses every login at
# USER_PIN_FINAL_TRY, the good PIN too, so no restart or reload of httpd clears that flag: this login does.
# Run as the token administrator (a member of pkcs11, not root), with the good PIN in TOKEN_USER_PIN or typed twice
# on a terminal. Optional: TOKEN_LABEL (IBMICATOK).
# At USER_PIN_FINAL_TRY this login is the token's last try: a wrong PIN here locks it for every service.
# Exit status: 0 no failed login is counted any more; 1 nothing was cleared (the message says why).
set -euo pipefail

TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
die() { echo "clear-pin-count: $*" >&2; exit 1; }
# openCryptoki's tools are in /usr/sbin, which an ordinary login's PATH lacks on Debian and Ubuntu; the system's
# folders first, so that no tool of the same name elsewhere (/usr/local) gets the PIN.
PATH="/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}"
[[ $EUID -ne 0 ]] || die "run this as the token administrator (a member of pkcs11), not as root: a root-run token" \
  "tool follows what a pkcs11 member put in the token folders."
id -nG | tr ' ' '\n' | grep -qx pkcs11 || die "$(id -un) is not a member of the group pkcs11: ask for the token" \
  "administrator, or add this user with the crypto chapter's step."
for tool in pkcsconf p11sak; do
  command -v "$tool" >/dev/null || die "$tool is missing: install openCryptoki."
done

slot=$({ pkcsconf -t 2>/dev/null || true; } | awk -v want="$TOKEN_LABEL" '
    /^Token #[0-9]+ Info:/ { slot = substr($2, 2) }
    /^[[:space:]]*Label:/  { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, "")
                             if ($0 == want) { print slot; exit } }')
[[ -n $slot ]] || die "no token labelled $TOKEN_LABEL in 'pkcsconf -t': is pkcsslotd running?"
# pkcsconf ends the names with "|", a backspace and ")": shown here as a terminal shows it.
flags_line() { pkcsconf -t -c "$slot" 2>/dev/null | tr -d '\b' | sed -n 's/^[[:space:]]*\(Flags:.*\)/\1/p' | sed 's/|)$/)/'; }
flags() { flags_line | sed -n 's/^Flags:[[:space:]]*0x\([0-9A-Fa-f]*\).*/\1/p'; }

f=$(flags)
[[ -n $f ]] || die "pkcsconf -t -c $slot shows no flags."
((16#$f & 0x40000)) && die "the user PIN of token $TOKEN_LABEL is locked ($(flags_line)). A login cannot clear" \
  "that: its security officer sets a new user PIN (pkcsconf -c $slot -u), then every service gets it."
((16#$f & 0x80000)) && die "token $TOKEN_LABEL has no user PIN yet (USER_PIN_TO_BE_CHANGED: set when the token is" \
  "initialised, cleared when its security officer first sets the user PIN): the security officer sets one with" \
  "pkcsconf -c $slot -u (a login with -p would be refused)."
if ! ((16#$f & 0x30000)); then
  echo "token $TOKEN_LABEL counts no failed login: nothing to clear."
  exit 0
fi

# The PIN: from the environment, else typed twice (at the final try a typing error locks the token).
if [[ -z ${TOKEN_USER_PIN:-} ]]; then
  [[ -t 0 ]] || die "set TOKEN_USER_PIN: there is no terminal to ask on."
  read -rs -p "the user PIN of token $TOKEN_LABEL: " TOKEN_USER_PIN; echo >&2
  read -rs -p "the same PIN again: " again; echo >&2
  [[ $TOKEN_USER_PIN == "$again" ]] || die "the two entries differ: no login was made."
fi

echo "token $TOKEN_LABEL, slot $slot"
echo "before:       $(flags_line)"
if ! PKCS11_USER_PIN="$TOKEN_USER_PIN" p11sak list-key private --slot "$slot" >/dev/null 2>&1; then
  if ((16#$(flags) & 0x40000)); then
    die "the token refused the PIN in TOKEN_USER_PIN, and that was its last try: the user PIN is now locked" \
      "($(flags_line)). Its security officer sets a new one (pkcsconf -c $slot -u)."
  fi
  die "the token refused the PIN in TOKEN_USER_PIN ($(flags_line)): one more failed login is counted."
fi
echo "after login:  $(flags_line)"
((16#$(flags) & 0x70000)) && die "the login was accepted but the count is still there ($(flags_line))."
echo "cleared: token $TOKEN_LABEL counts no failed login. Now start or reload the services that use it, one at a time,"
echo "and check that each one serves."
