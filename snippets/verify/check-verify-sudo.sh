#!/usr/bin/env bash
# Proves that verify's login account can do no more through sudo than the runbook's rules give it: as zrprobe with
# group pkcs11, only /usr/sbin/pkcsconf -t; as root or another user, only the checks under
# /usr/local/libexec/zrunbook-verify. The older rule that ran pkcsconf -t as root fails it: loading openCryptoki as
# root follows a link a pkcs11 member planted in a token folder (CVE-2026-23893).
# A rule such as "zrops ALL=(ALL) NOPASSWD: ALL" (often added to make an earlier tool work) fails it, and so does a
# login as root, which needs no rule at all. Read-only: it lists the account's own rules with sudo -n -l -l.
# Run as the login user verify uses:   bash check-verify-sudo.sh
# Exit status: 0 the account is scoped; 1 it can do more (every extra rule is listed), or the check could not look.
set -euo pipefail

die() { echo "check-verify-sudo: $*" >&2; exit 1; }
CHECKS=/usr/local/libexec/zrunbook-verify
((EUID != 0)) || die "verify logs in as root here: it needs no sudo rule and can change anything. Give it an ordinary" \
  "login user with the verify page's account step (install-verify-account.sh)."
command -v sudo >/dev/null || die "sudo is missing: the account has no rules at all (install sudo, then the account step)."

listed=$(sudo -n -l -l 2>&1) ||
  die "sudo would not list $(id -un)'s rules without a password: $(tail -n 1 <<<"$listed")."
# sudo -l -l prints one block per rule: "RunAsUsers: ...", then "Commands:" and one command per line.
extra=$(awk -v checks="$CHECKS/" '
  /^Sudoers entry/   { runas = ""; groups = ""; in_cmds = 0; next }
  /^[[:space:]]*RunAsUsers:/  { sub(/^[[:space:]]*RunAsUsers:[[:space:]]*/, ""); runas = $0; next }
  /^[[:space:]]*RunAsGroups:/ { sub(/^[[:space:]]*RunAsGroups:[[:space:]]*/, ""); groups = $0; next }
  /^[[:space:]]*Commands:/   { in_cmds = 1; next }
  in_cmds && /^[[:space:]]+[^[:space:]]/ {
    cmd = $0; sub(/^[[:space:]]+/, "", cmd)
    if (cmd == "/usr/sbin/pkcsconf -t") ok = (runas == "zrprobe" && groups == "pkcs11")
    else ok = (index(cmd, checks) == 1 && cmd !~ /[[:space:]*?]/ && groups == "")
    if (runas == "" || runas ~ /(^|,)[[:space:]]*ALL/) ok = 0
    if (!ok) print "as " (runas == "" ? "root" : runas) (groups == "" ? "" : ":" groups) ": " cmd
    next
  }
  { in_cmds = 0 }' <<<"$listed")
if [[ -n $extra ]]; then
  echo "check-verify-sudo: $(id -un) can run more through sudo than verify needs:" >&2
  while read -r line; do echo "  $line" >&2; done <<<"$extra"
  echo "  Remove those rules; the verify page's account step gives exactly what verify runs." >&2
  exit 1
fi
count=$(grep -c "^[[:space:]]*$CHECKS/" <<<"$listed" || true)
echo "$(id -un) can run through sudo only pkcsconf -t (as zrprobe:pkcs11) and the $count runbook check(s) under $CHECKS."
