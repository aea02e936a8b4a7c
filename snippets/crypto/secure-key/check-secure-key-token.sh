#!/usr/bin/env bash
# Proves that the CCA or EP11 token in a slot is ready for keys: openCryptoki loaded it (the token library read
# its configuration file, found IBM's host library and an adapter domain it may use) and the token is
# initialised. When it is not, says why, in openCryptoki's own words: each program that opens openCryptoki
# initialises every slot, and the error trace names what stopped this one.
# Usage: check-secure-key-token.sh SLOT   Run as a member of pkcs11 or as root, with pkcsslotd running. It changes
# nothing: the trace it asks openCryptoki for is removed again. Run as root, it loads openCryptoki as zrprobe (a
# system user in group pkcs11 only), never as root: loading the tokens opens and re-owns their files, through a link
# a pkcs11 member planted when root does it (CVE-2026-23893, openCryptoki before 3.27 without the fix).
set -euo pipefail

die() { echo "check-secure-key-token: $*" >&2; exit 1; }
[[ $# -eq 1 && $1 =~ ^[0-9]+$ ]] || die "usage: $0 SLOT (the slot number of the CCA or EP11 token; pkcsconf -s lists them)"
slot=$1
command -v pkcsconf >/dev/null || die "pkcsconf is missing: install openCryptoki."
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
tok pkcsconf -s -c "$slot" >/dev/null 2>&1 ||
  die "slot $slot is not configured, or pkcsslotd does not answer: check /etc/opencryptoki/opencryptoki.conf" \
    "and start pkcsslotd (systemctl restart pkcsslotd)."
# A slot whose token library is not CCA's or EP11's, by openCryptoki's configuration: an uninitialised ICA or soft
# token does not even load for a user who cannot create its files, so its model is read here, not from the token.
conf=${OCK_CONF:-/etc/opencryptoki/opencryptoki.conf}
stdll=$(awk -v want="$slot" '$1 == "slot" && $2 ~ /^[0-9]+$/ { cur = $2 }
  cur == want && $1 ~ /^stdll/ { sub(/^[^=]*=[[:space:]]*/, ""); print; exit }' "$conf" 2>/dev/null || true)
case $stdll in
  *ica*) other=ICA ;; *_sw* | *soft*) other=Soft ;; *tpm*) other=TPM ;; *icsf*) other=ICSF ;; *) other="" ;;
esac
[[ -z $other ]] ||
  die "slot $slot holds the $other token, not a CCA or EP11 one: choose the slot of the secure-key token."
trace_dir=/var/log/opencryptoki
[[ -w $trace_dir ]] || die "cannot write to $trace_dir, where openCryptoki writes its trace: run this as root" \
  "or as a member of pkcs11."

# Ask for the token's information with openCryptoki's trace at level 3 (errors and the "slot=N running" line with
# which each token library starts), in a shell whose PID names the trace file.
# shellcheck disable=SC2016  # $$ and $1 are the inner shell's
info=$(OPENCRYPTOKI_TRACE_LEVEL=3 tok bash -c 'echo "pid $$"; exec pkcsconf -t -c "$1" 2>&1' _ "$slot") && rc=0 || rc=$?
pid=$(sed -n '1s/^pid //p' <<<"$info")
trace="$trace_dir/trace.$pid"
# From this slot's part of the trace (its "slot=N running" line up to the next slot's): the error lines, without
# time and source, and the APQNs an EP11 allowlist was read as (CARD.DOMAIN in hex, as lszcrypt and sysfs name them).
errors="" apqns=""
if [[ -f $trace ]]; then
  errors=$(awk -v want="$slot" '
    match($0, /slot=[0-9]+ running/) { cur = substr($0, RSTART + 5, RLENGTH - 13) }
    cur == want && / ERROR: / { sub(/^.* ERROR: /, ""); print }' "$trace")
  apqns=$(awk -v want="$slot" '
    match($0, /slot=[0-9]+ running/) { cur = substr($0, RSTART + 5, RLENGTH - 13) }
    cur == want && match($0, /APQN entry [0-9]+: adapter=[0-9]+ domain=[0-9]+/) {
      split(substr($0, RSTART, RLENGTH), f, /[= ]/); printf "%s%02x.%04x", sep, f[5], f[7]; sep = " " }' "$trace")
  rm -f "$trace"
fi
# Allowlisted APQNs this system does not have: a typing slip (lszcrypt prints hex; 010 is read as 0 and 10).
absent=()
if [[ -n $apqns && -d /sys/bus/ap/devices ]]; then
  for apqn in $apqns; do [[ -e /sys/bus/ap/devices/$apqn ]] || absent+=("$apqn"); done
fi
read_as=""
[[ -z $apqns ]] || read_as=" openCryptoki read its APQN allowlist as: $apqns."

if ((rc == 0)); then
  model=$(sed -n 's/^[[:space:]]*Model:[[:space:]]*\([A-Z0-9]*\).*/\1/p' <<<"$info")
  flags=$(sed -n 's/^[[:space:]]*Flags:[[:space:]]*\(0x[0-9A-Fa-f]*\).*/\1/p' <<<"$info")
  label=$(sed -n 's/^[[:space:]]*Label:[[:space:]]*//p' <<<"$info" | sed 's/[[:space:]]*$//')
  [[ $model == CCA || $model == EP11 ]] ||
    die "slot $slot holds the ${model:-unknown} token, not a CCA or EP11 one: choose the slot of the secure-key token."
  # CKF_TOKEN_INITIALIZED 0x400, CKF_USER_PIN_INITIALIZED 0x8 (PKCS #11 CK_TOKEN_INFO)
  (((flags & 0x400) && (flags & 0x8))) ||
    die "the $model token in slot $slot is loaded but not initialised (flags $flags): initialise it with init-token.sh" \
      "(TOKEN_SLOT=$slot)."
  ((${#absent[@]} == 0)) ||
    die "the $model token in slot $slot is loaded, but its allowlist names APQNs this system does not have:" \
      "${absent[*]}.$read_as Correct /etc/opencryptoki's configuration file for the slot (hex needs 0x)."
  echo "Slot $slot: the $model token '$label' is loaded and initialised: its keys are made and used on the adapter.$read_as"
  exit 0
fi

reason=$(head -n 1 <<<"$errors")
case $errors in
  *"Error loading shared library 'libep11"*)
    die "slot $slot: the EP11 token read its configuration, but IBM's EP11 host library (libep11) is not installed:" \
      "install it (IBM distributes it apart from the Linux distributions), then restart pkcsslotd and the servers.$read_as" ;;
  *"Error loading shared library 'libcsulcca"*)
    die "slot $slot: the CCA token read its configuration, but IBM's CCA host library (libcsulcca.so) is not" \
      "installed: install IBM's CCA package (IBM distributes it apart from the Linux distributions), then restart" \
      "pkcsslotd and the servers." ;;
  *"config file"* | *"unexpected token"* | *"PKEY mode"* | *"APQN mode"* | *"Expected valid"*)
    die "slot $slot: openCryptoki refused the token's configuration file: $reason" ;;
  "")
    die "slot $slot has no token (pkcsconf: $(tail -n 1 <<<"$info")), and openCryptoki's trace names no cause." ;;
  *)
    die "slot $slot has no token; openCryptoki's trace says: $reason" ;;
esac
