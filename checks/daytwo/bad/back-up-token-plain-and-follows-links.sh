#!/usr/bin/env bash
# negates: daytwo/back-up-token.sh
# checker: testinfra
# rejects: holds what openCryptoki never writes
# test: checks/daytwo/test_back_up_token.py::test_what_a_pkcs11_member_plants_in_the_token_folder_is_refused_and_never_followed
# NEGATIVE CASE (checks/daytwo/test_back_up_token.py): back-up-token.sh before 2026-11-27. It wrote a plain tar.gz,
# which anyone with a copy can attack offline (PINs of at most 8 characters, the wrap key a PBKDF2 of the PIN), and
# as root it hashed every path of the group-writable token folder with sha256sum, which follows a symbolic link a
# pkcs11 member planted there. The checks must reject both: the archive is readable without a key, and the manifest
# holds the hash of a root-only file the link points to.
# Backs up the data store of an openCryptoki token that keeps its keys in files (the ICA and the Soft token): the
# token folder with NVTOK.DAT, MK_SO, MK_USER and TOK_OBJ/, owners and modes kept, in a tar.gz with a manifest
# (sha256, owner, group and mode of every file). Run as root: back-up-token.sh BACKUP_DIR
# Environment (optional): TOKEN_DIR, the token folder (default: lite, the ICA token's, on s390x; swtok, the Soft
# token's, elsewhere; tokname in opencryptoki.conf names another), OCK_DATA_STORE (/var/lib/opencryptoki).
# The slot daemon is stopped while the files are copied and started again afterwards if it was running. Needs
# check-token-not-in-use.sh beside it.
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# == 1)) || die "Usage: $0 BACKUP_DIR (a folder for the archive and its manifest)"
backup_dir=$1
store="${OCK_DATA_STORE:-/var/lib/opencryptoki}"
if [[ $(uname -m) == s390x ]]; then default_dir=lite; else default_dir=swtok; fi
token_dir="${TOKEN_DIR:-$default_dir}"
token="$store/$token_dir"
pidfile=/run/opencryptoki/pkcsslotd.pid

[[ $EUID -eq 0 ]] || die "Run this as root: the token folder belongs to root and the pkcs11 group."
command -v pkcsslotd >/dev/null || die "pkcsslotd is missing: install openCryptoki (this host has no token to back up)."
[[ $token_dir =~ ^[A-Za-z0-9._-]+$ ]] || die "TOKEN_DIR must be a folder name under $store, not '$token_dir'."
[[ -d $token ]] || die "$token does not exist: set TOKEN_DIR to the token's folder (ls $store)."
missing=()
for part in NVTOK.DAT MK_SO MK_USER TOK_OBJ; do [[ -e $token/$part ]] || missing+=("$part"); done
((${#missing[@]} == 0)) ||
  die "$token lacks ${missing[*]}: it is not an initialised token with a user PIN, so there is nothing to back up."
case $token_dir in
  ccatok* | ep11tok*)
    echo "Note: $token_dir looks like a CCA or EP11 token folder. Its keys are secure keys, wrapped by the adapters'" \
      "master key: the archive is usable only where the adapter domains carry the same master key." >&2 ;;
esac
mkdir -p "$backup_dir"

slotd=$(cat "$pidfile" 2>/dev/null || true)
# No program may use the token meanwhile: the check beside this script names those that do.
check="$(dirname "$0")/check-token-not-in-use.sh"
[[ -r $check ]] || die "$check is missing: keep check-token-not-in-use.sh beside this script (the same page has it)."
bash "$check" "$token_dir" >/dev/null || die "Nothing was copied."
# Running, and not a zombie (it has exited). The status is read once: a zombie reaped between two reads must not
# count as running.
alive() { local st; st=$(cat "/proc/$1/status" 2>/dev/null) || return 1; ! grep -q '^State:[[:space:]]*Z' <<<"$st"; }

# Stop the slot daemon for the copy, so that no program can open the token meanwhile; start it again at the end.
systemd=no
if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then systemd=yes; fi  # systemd's own package
running=no
if [[ -n $slotd ]] && alive "$slotd"; then running=yes; fi
start_again() {
  [[ $running == yes ]] || return 0
  if [[ $systemd == yes ]]; then systemctl start pkcsslotd.service; else pkcsslotd; fi
}
if [[ $running == yes ]]; then
  if [[ $systemd == yes ]]; then systemctl stop pkcsslotd.service; else kill -TERM "$slotd"; fi
  for _ in $(seq 50); do alive "$slotd" || break; sleep 0.2; done
  ! alive "$slotd" || die "pkcsslotd (PID $slotd) did not stop within 10 seconds; nothing was copied."
fi
trap start_again EXIT

stamp=$(date -u +%Y%m%dT%H%M%SZ)
name="opencryptoki-$token_dir-$(hostname -s)-$stamp"
archive="$backup_dir/$name.tar.gz"
manifest="$backup_dir/$name.manifest"
umask 077
# Owners and groups by name (the pkcs11 group's number can differ on the host you restore to).
tar --create --gzip --preserve-permissions --file "$archive" --directory "$store" "$token_dir"
# The format of the store: openCryptoki 3.12 and later write 40-byte master-key files (AES key wrap); older
# stores, and tokens without "tokversion = 3.12" in opencryptoki.conf, have larger ones.
if [[ $(stat -c %s "$token/MK_SO") == 40 ]]; then format=3.12; else format=pre-3.12; fi
{
  echo "# openCryptoki token backup: $archive"
  echo "token-dir: $token_dir"
  echo "store: $store"
  echo "store-format: $format"
  echo "host: $(hostname -f 2>/dev/null || hostname) ($(uname -m))"
  echo "made: $stamp"
  echo "archive-sha256: $(sha256sum "$archive" | cut -d' ' -f1)"
  echo "# sha256 (or: directory) mode owner:group path"
  (cd "$store" && find "$token_dir" | sort | while read -r path; do
    if [[ -d $path ]]; then sum=directory; else sum=$(sha256sum "$path" | cut -d' ' -f1); fi
    echo "$sum $(stat -c '%a %U:%G' "$path") $path"
  done)
} >"$manifest"
files=$(grep -c '^[0-9a-f]\{64\} ' "$manifest")
echo "backed up $token ($files files, store format $format) to $archive"
echo "manifest: $manifest"
echo "Keep the archive as safe as the token's PINs: with the user PIN, it opens every private key of the token."
