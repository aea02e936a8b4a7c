#!/usr/bin/env bash
# Names the known reasons an openCryptoki token stops answering a service user, one line each:
#   FOUND <signature>: <what is wrong>
# and what the user sees (the error of `pkcsconf -t` run as that user). Read-only: it changes nothing.
# Run as root, with the users the servers run as, and the token's label if you want to know whether each user
# sees it:   TOKEN_LABEL=IBMICATOK bash doctor-probe.sh www-data [wasadmin ...]
# Exit status: 0 when it finds none of them, 1 when it finds one, 2 when it cannot look.
set -euo pipefail

die() { echo "doctor-probe: $*" >&2; exit 2; }
(($# >= 1)) || die "usage: $0 USER... (the users the servers run as)"
((EUID == 0)) || die "run as root: it reads the token's lock and shared-memory files and runs pkcsconf as each user."
command -v pkcsconf >/dev/null || die "pkcsconf is missing: install opencryptoki."
command -v pgrep >/dev/null || die "pgrep is missing: install procps."
found=0
say() { echo "FOUND $1: $2"; found=1; }

pgrep -x pkcsslotd >/dev/null || say slotd-stopped "the slot daemon pkcsslotd is not running"
conf=/etc/opencryptoki/strength.conf
if [[ ! -e $conf ]]; then
  say strength-conf "$conf is missing"
elif [[ $(stat -c %G "$conf") != pkcs11 ]] || ! [[ $(stat -c %A "$conf") == ????r* ]]; then
  say strength-conf "$conf is not readable by the pkcs11 group ($(stat -c '%A %U:%G' "$conf"))"
fi
# Lock folders: every token's folder must belong to the pkcs11 group with group rwx (tpm/<user> is per user).
if [[ -d /var/lock/opencryptoki ]]; then
  while read -r dir; do
    say lock-perms "$dir is $(stat -c '%A %U:%G' "$dir"), not group pkcs11 with rwx"
  done < <(find /var/lock/opencryptoki -maxdepth 1 -type d \( ! -group pkcs11 -o ! -perm -g=rwx \) -print)
fi
# Token shared memory: each token's segment in /dev/shm must belong to pkcs11 with group read and write.
for shm in /dev/shm/var.lib.opencryptoki.*; do
  [[ -e $shm && $shm != *.tpm.* ]] || continue
  if [[ $(stat -c %G "$shm") != pkcs11 ]] || [[ $(stat -c %A "$shm") != ????rw* ]]; then
    say stale-shm "$shm is $(stat -c '%A %U:%G' "$shm") (left by a process that ran without the pkcs11 group)"
  fi
done
for user in "$@"; do
  id "$user" >/dev/null 2>&1 || { say no-such-user "there is no user $user"; continue; }
  id -nG "$user" | tr ' ' '\n' | grep -qx pkcs11 || say pkcs11-group "$user is not in the pkcs11 group"
  listing=$(runuser -u "$user" -- pkcsconf -t 2>&1 || true)
  seen=$(grep -m1 -E 'rror|CKR_|returned 0 slots' <<<"$listing" || true)
  [[ -z $seen ]] || echo "SEEN $user: $seen"
  if [[ -n ${TOKEN_LABEL:-} ]] && ! awk -v want="$TOKEN_LABEL" '/^[[:space:]]*Label:/ {
      sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, ""); if ($0 == want) f = 1 }
      END { exit !f }' <<<"$listing"; then
    echo "SEEN $user: the token $TOKEN_LABEL is not in pkcsconf -t"
  fi
done
exit "$found"
