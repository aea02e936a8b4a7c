#!/usr/bin/env bash
# Names the known reasons an openCryptoki token stops answering a service user, one line each:
#   FOUND <signature>: <what is wrong>
# and what the user sees (the error of `pkcsconf -t` run as that user). Read-only: it changes nothing.
# Run as root, with the users the servers run as, each with the label of the token it uses if you want to know
# whether the user sees it:   bash doctor-probe.sh www-data:IBMICATOK [wasadmin:WASTOK ...]
# It never logs in: a token's PIN counters are read from its flags (pkcsconf -t). Every pkcsconf it runs has
# LOOK_SECONDS (default 10) to answer, so a hung slot daemon costs that long once and leaves nothing running.
# Root only looks: no pkcsconf runs as root. The tokens' flags are read as zrprobe (group pkcs11) and no other
# group, each service user's view as that user, because loading openCryptoki opens and re-owns the token files,
# through a link a pkcs11 member planted if run as root (CVE-2026-23893, openCryptoki before 3.27 without the fix).
# Exit status: 0 when it finds none of them, 1 when it finds one, 2 when it cannot look.
set -euo pipefail

die() { echo "doctor-probe: $*" >&2; exit 2; }
(($# >= 1)) || die "usage: $0 USER[:TOKEN_LABEL]... (the users the servers run as)"
((EUID == 0)) || die "run as root: it reads the token's lock and shared-memory files and runs pkcsconf as each user."
command -v pkcsconf >/dev/null || die "pkcsconf is missing: install opencryptoki."
command -v setpriv >/dev/null || die "setpriv is missing: install util-linux."
getent group pkcs11 | cut -d: -f4 | tr , '\n' | grep -qx zrprobe ||
  die "there is no user zrprobe listed in group pkcs11, as whom the token tools run: the slot daemon's step" \
    "(start-pkcsslotd.sh) makes it, or: useradd --system --no-create-home --shell /usr/sbin/nologin --groups pkcs11 zrprobe"
command -v pgrep >/dev/null || die "pgrep is missing: install procps."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
command -v ps >/dev/null || die "ps is missing: install procps."
found=0
say() { echo "FOUND $1: $2"; found=1; }
wait_s=${LOOK_SECONDS:-10}
answers=yes  # no when the slot daemon hangs: pkcsconf would wait for it, so it is asked only once

# The slot daemon: not running, a zombie nobody reaped (defunct), stopped by a signal, or not answering.
# A live daemon counts first: an unreaped one beside it is a leftover, not the daemon that serves the tokens.
slotd='' state=''
for pid in $(pgrep -x pkcsslotd || true); do
  s=$(ps -o stat= -p "$pid" 2>/dev/null | tr -d ' ' || true)
  [[ -n $s ]] || continue
  if [[ -z $slotd || ($state == Z* && $s != Z*) ]]; then slotd=$pid state=$s; fi
done
if [[ -z $slotd ]]; then
  say slotd-stopped "the slot daemon pkcsslotd is not running"
elif [[ $state == Z* ]]; then
  say slotd-defunct "pkcsslotd (pid $slotd) has exited but was not reaped (state $state): no slot daemon serves the tokens"
elif [[ $state == T* ]]; then
  say slotd-hung "pkcsslotd (pid $slotd) is stopped (state $state: a SIGSTOP or a debugger), so every program that starts using openCryptoki waits for it"
  answers=no
else
  # Token tools never as root: pkcsconf -t logs in to nothing, but loading openCryptoki opens every token's
  # NVTOK.DAT and sets its mode and group, following a planted link as root on a store without the fix. As zrprobe
  # (group pkcs11 only) it has a member's rights only; as each service user it runs below through runuser.
  listing=$(timeout -k 2 "$wait_s" setpriv --reuid=zrprobe --regid=pkcs11 --clear-groups -- pkcsconf -t 2>&1) || {
    rc=$?
    if ((rc == 124)); then
      say slotd-hung "pkcsslotd (pid $slotd, state $state) did not answer pkcsconf -t within $wait_s s"
      answers=no
    fi
  }
  # Each token's PIN counters, from its flags (PKCS #11 CKF_USER_PIN_*): read, never logged in. Only initialised
  # tokens (TOKEN_INITIALIZED, 0x400): one never initialised is in no one's use and shows USER_PIN_TO_BE_CHANGED.
  if [[ $answers == yes && -n ${listing:-} ]]; then
    while read -r label flags; do
      (( 16#$flags & 0x400 )) || continue
      (( 16#$flags & 0x40000 )) && say pin-locked "token $label: USER_PIN_LOCKED (flags 0x$flags): three wrong user PINs in a row, no new login"
      (( 16#$flags & 0x20000 )) && say pin-final-try "token $label: USER_PIN_FINAL_TRY (flags 0x$flags): the next wrong user PIN locks it, and pkcs11-provider (Apache) cancels every new login"
      (( 16#$flags & 0x10000 )) && say pin-count-low "token $label: USER_PIN_COUNT_LOW (flags 0x$flags): a wrong user PIN since the last good login"
      (( 16#$flags & 0x800000 )) && say so-pin-factory "token $label: SO_PIN_TO_BE_CHANGED (flags 0x$flags): its security officer PIN is still the default it was initialised with"
      (( 16#$flags & 0x80000 )) && say pin-to-be-changed "token $label: USER_PIN_TO_BE_CHANGED (flags 0x$flags): its user PIN was never set or changed"
    done < <(awk '/^[[:space:]]*Label:/ { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, ""); label = $0 }
                  /^[[:space:]]*Flags:/ && label != "" { sub(/.*0x/, ""); sub(/[^0-9A-Fa-f].*/, ""); print label, $0; label = "" }' <<<"${listing:-}")
  fi
fi
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
for arg in "$@"; do
  user=${arg%%:*} label=""
  [[ $arg != *:* ]] || label=${arg#*:}
  id "$user" >/dev/null 2>&1 || { say no-such-user "there is no user $user"; continue; }
  id -nG "$user" | tr ' ' '\n' | grep -qx pkcs11 || say pkcs11-group "$user is not in the pkcs11 group"
  [[ $answers == yes ]] || { echo "SEEN $user: nothing: the slot daemon does not answer"; continue; }
  listing=$(timeout -k 2 "$wait_s" runuser -u "$user" -- pkcsconf -t 2>&1 || true)
  seen=$(grep -m1 -E 'rror|CKR_|returned 0 slots' <<<"$listing" || true)
  [[ -z $seen ]] || echo "SEEN $user: $seen"
  if [[ -n $label ]] && ! awk -v want="$label" '/^[[:space:]]*Label:/ {
      sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, ""); if ($0 == want) f = 1 }
      END { exit !f }' <<<"$listing"; then
    echo "SEEN $user: the token $label is not in pkcsconf -t"
  fi
done
exit "$found"
