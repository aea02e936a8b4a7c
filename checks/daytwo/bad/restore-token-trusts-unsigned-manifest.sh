#!/usr/bin/env bash
# negates: daytwo/restore-token.sh
# checker: testinfra
# rejects: is not signed by the backup's signing key
# test: checks/daytwo/test_back_up_token.py::test_an_archive_and_manifest_forged_with_the_public_recipient_are_refused
# NEGATIVE CASE (checks/daytwo/test_back_up_token.py): restore-token.sh before 2026-12 (review M-5). It trusted the
# plain manifest beside the archive: "the manifest proves the archive is the one the backup made". But age's
# recipients are unauthenticated, and the manifest names the recipient: whoever can write to the backup store can
# encrypt a token folder of their choosing to it and write a manifest to match, and this script unpacks it as root.
# The check must reject exactly that: the forged archive is restored here, and refused by the script that checks the
# manifest's signature.
# Restores an openCryptoki token from an archive of back-up-token.sh, on the same host or a new one: checks the
# archive first (the manifest's sha256, that the identity opens it, only plain files and folders, NVTOK.DAT, MK_SO,
# MK_USER and TOK_OBJ/ present, the slot's store format), puts the token folder in place with its owners and modes,
# and starts the slot daemon. The PINs are the backup's.
# Run as root: restore-token.sh ARCHIVE.tar.gz.age IDENTITY_FILE (the manifest ARCHIVE.manifest beside it; the
# identity file holds the secret backup key, brought to this host for the restore only). REPLACE=yes replaces a
# token that holds keys (the folder is kept as <folder>.before-restore-<time>). With the backup's user PIN in
# TOKEN_USER_PIN it logs in afterwards and lists the keys. Optional: OCK_DATA_STORE (/var/lib/opencryptoki),
# OCK_CONF (/etc/opencryptoki/opencryptoki.conf). Needs check-token-not-in-use.sh beside it.
# Why root: the files must get back their owners (root and the users that made them), which only root can set,
# and the slot daemon is stopped and started (which stops every token on the host meanwhile). The token store,
# which the pkcs11 group may write, is closed to the group meanwhile: root unpacks into a folder only it may enter,
# and only renames folders in the store; the archive may hold only plain files and folders. The token tools afterwards (pkcsconf, p11sak) run as the token
# administrator, TOKEN_ADMIN (a member of pkcs11, not root; default SUDO_USER): before openCryptoki 3.27 a root-run
# token tool follows a link a pkcs11 member planted in the token folders (CVE-2026-23893).
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# == 2)) || die "Usage: $0 ARCHIVE.tar.gz.age IDENTITY_FILE (made by back-up-token.sh, its .manifest beside it;" \
  "the identity file holds the secret backup key)"
archive=$1 identity=$2
manifest="${archive%.tar.gz.age}.manifest"
store="${OCK_DATA_STORE:-/var/lib/opencryptoki}"
conf="${OCK_CONF:-/etc/opencryptoki/opencryptoki.conf}"
pidfile=/run/opencryptoki/pkcsslotd.pid

[[ $EUID -eq 0 ]] || die "Run this as root: the restored files get back their owners, and the slot daemon restarts."
for tool in pkcsslotd pkcsconf p11sak age runuser; do
  command -v "$tool" >/dev/null || die "$tool is missing: install openCryptoki, age and util-linux before restoring."
done
TOKEN_ADMIN="${TOKEN_ADMIN:-${SUDO_USER:-}}"
[[ -n $TOKEN_ADMIN && $TOKEN_ADMIN != root ]] || die "Set TOKEN_ADMIN to the token administrator, a member of pkcs11" \
  "other than root: the checks after the restore run the token tools as that user, never as root. Nothing was changed."
id -nG "$TOKEN_ADMIN" 2>/dev/null | tr ' ' '\n' | grep -qx pkcs11 || die "$TOKEN_ADMIN is not a member of the group" \
  "pkcs11 (or no such user): add the token administrator with the crypto chapter's step. Nothing was changed."
# A token tool as the token administrator, from / (root's working folder may be closed to that user).
as_admin() { (cd / && runuser -u "$TOKEN_ADMIN" -- "$@"); }
[[ $archive == *.tar.gz.age ]] || die "$archive is not an archive of back-up-token.sh (*.tar.gz.age): nothing was changed."
[[ -r $archive ]] || die "Cannot read the archive $archive."
[[ -r $identity ]] || die "Cannot read the identity file $identity (the secret backup key). Nothing was changed."
# The secret key opens every backup made to it: no one but root may read it while it is on this host.
[[ $(stat -L -c %a "$identity") == [0-7]00 ]] || die "Refused: $identity may be read by others (mode" \
  "$(stat -L -c %a "$identity")): chmod 600 it, and remove it from this host after the restore. Nothing was changed."

# The manifest proves the archive is the one the backup made; it is checked before anything is decrypted.
[[ -r $manifest ]] || die "The manifest $manifest is missing: without it nothing shows the archive is whole." \
  "Nothing was changed."
want=$(sed -n 's/^archive-sha256: //p' "$manifest")
sums=$(grep -E '^[0-9a-f]{64} ' "$manifest" || true)  # sha256 mode owner:group path, one line per file
folders=$(grep -E '^directory ' "$manifest" || true)  # the same for each folder, "directory" for the sha256
[[ -n $sums && -n $folders ]] || die "$manifest lists no files: it is not a manifest of back-up-token.sh. Nothing was changed."
[[ $want == "$(sha256sum "$archive" | cut -d' ' -f1)" ]] ||
  die "$archive does not match the sha256 in $manifest: it is not the archive the backup made. Nothing was changed."
# Only the secret key of the backup's recipient opens the archive; age authenticates what it decrypts.
if ! why=$(age --decrypt --identity "$identity" --output /dev/null "$archive" 2>&1); then
  die "The identity in $identity does not open $archive (age: ${why#age: }). Bring the secret key of the" \
    "recipient the backup was made for: $(sed -n 's/^recipient: //p' "$manifest"). Nothing was changed."
fi
unpack() { age --decrypt --identity "$identity" "$archive" | tar "$@" --gzip --file -; }
listing=$(unpack --list --verbose 2>/dev/null) || die "$archive does not hold a readable tar.gz archive: nothing was changed."

# One token folder of plain files and folders, and the four parts without which the token cannot open. A symbolic
# or hard link in the archive would let the unpacking root write elsewhere: back-up-token.sh never makes one.
odd=$(awk 'NF != 6 || $1 !~ /^[-d]/ || $NF !~ /^[A-Za-z0-9._\/-]+$/ || $NF ~ /(^|\/)\.\.?(\/|$)/ { print }' <<<"$listing")
[[ -z $odd ]] || die "Refused: $archive holds what back-up-token.sh never writes (links, special files or odd" \
  "names): ${odd//$'\n'/ }. Nothing was changed."
names=$(awk '{ print $NF }' <<<"$listing")
mapfile -t tops < <(cut -d/ -f1 <<<"$names" | sort -u)
if ((${#tops[@]} != 1)) || ! [[ ${tops[0]} =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]*$ ]]; then
  die "$archive does not hold exactly one token folder (it holds: ${tops[*]}): nothing was changed."
fi
token_dir=${tops[0]}
missing=()
for part in NVTOK.DAT MK_SO MK_USER TOK_OBJ/; do
  grep -qxF "$token_dir/$part" <<<"$names" || missing+=("${part%/}")
done
if ((${#missing[@]})); then
  die "Refused: $archive lacks ${missing[*]} of token folder $token_dir. Without MK_SO and MK_USER the token's" \
    "master key is lost, and with it every private key; without NVTOK.DAT the token has no PINs. Take a new" \
    "backup with back-up-token.sh. Nothing was changed."
fi

# The slot that uses this folder (tokname, or the token library's own folder name), and its store format.
read -r slot stdll tokversion < <(awk -v want="$token_dir" '
  function value(line) { sub(/^[^=]*=[[:space:]]*/, "", line); gsub(/[";[:space:]]/, "", line); return line }
  /^[[:space:]]*slot[[:space:]]+[0-9]+/ { slot = $2; stdll = ""; name = ""; ver = "-"; inside = 1; next }
  inside && /^[[:space:]]*stdll[[:space:]]*=/      { stdll = value($0); sub(/.*\//, "", stdll) }
  inside && /^[[:space:]]*tokname[[:space:]]*=/    { name = value($0) }
  inside && /^[[:space:]]*tokversion[[:space:]]*=/ { ver = value($0) }
  inside && /^[[:space:]]*}/ {
    inside = 0
    if (name == "") {
      if (stdll == "libpkcs11_sw.so") name = "swtok"; else if (stdll == "libpkcs11_ica.so") name = "lite"
      else if (stdll == "libpkcs11_cca.so") name = "ccatok"; else if (stdll == "libpkcs11_ep11.so") name = "ep11tok"
    }
    if (name == want) { print slot, stdll, ver; exit }
  }' "$conf" 2>/dev/null || true) || true
[[ -n ${slot:-} ]] || die "No slot in $conf uses the token folder $token_dir: configure the token's slot first" \
  "(the same token library, and tokname = $token_dir if the source had it). Nothing was changed."
case $stdll in
  libpkcs11_sw.so | libpkcs11_ica.so) ;;
  *) die "Refused: slot $slot is a $stdll token. Its keys are secure keys wrapped by the adapters' master key;" \
    "restore it only where the target domains carry the same master key, with the token's own procedure." \
    "Nothing was changed." ;;
esac
mk_size=$(awk -v f="$token_dir/MK_SO" '$NF == f { print $3 }' <<<"$listing")
if [[ $mk_size == 40 ]]; then format=3.12; else format=pre-3.12; fi
if [[ $format == 3.12 && $tokversion != 3.12 ]]; then
  die "Refused: the archive holds the 3.12 store format, but slot $slot in $conf lacks 'tokversion = 3.12'." \
    "Add it to the slot (as the source host has it). Nothing was changed."
elif [[ $format == pre-3.12 && $tokversion == 3.12 ]]; then
  die "Refused: the archive holds the store format from before openCryptoki 3.12, and slot $slot reads the new one" \
    "(tokversion = 3.12). Restore it without tokversion, then convert it with pkcstok_migrate. Nothing was changed."
fi
# Owners by name: each must exist here.
while read -r owner; do
  if ! getent passwd "${owner%/*}" >/dev/null || ! getent group "${owner#*/}" >/dev/null; then
    die "The archive's files belong to $owner, unknown on this host: install openCryptoki (it makes the pkcs11" \
      "group) and create the owner. Nothing was changed."
  fi
done < <(awk '{ print $2 }' <<<"$listing" | sort -u)

token="$store/$token_dir"
[[ ! -L $token ]] || die "Refused: $token is a symbolic link, which openCryptoki never makes. Nothing was changed."
shm_name=${token#/}
shm="/dev/shm/${shm_name//\//.}"  # the token's shared memory: its path with dots for slashes
slotd=$(cat "$pidfile" 2>/dev/null || true)
# No program may use the token meanwhile: the check beside this script names those that do.
check="$(dirname "$0")/check-token-not-in-use.sh"
[[ -r $check ]] || die "$check is missing: keep check-token-not-in-use.sh beside this script (the same page has it)."
bash "$check" "$token_dir" >/dev/null || die "Nothing was changed."
# Running, and not a zombie (it has exited). The status is read once: a zombie reaped between two reads must not
# count as running.
alive() { local st; st=$(cat "/proc/$1/status" 2>/dev/null) || return 1; ! grep -q '^State:[[:space:]]*Z' <<<"$st"; }
if [[ -e $token/MK_USER || -L $token/MK_USER ]] || find "$token/TOK_OBJ" -type f -print -quit 2>/dev/null | grep -q .; then
  [[ ${REPLACE:-no} == yes ]] || die "$token holds a token with a user PIN or keys. Set REPLACE=yes to replace" \
    "it (the folder is kept beside it as $token_dir.before-restore-<time>). Nothing was changed."
fi

# Stop the slot daemon while the folder changes; start it at the end (also after a failure).
systemd=no
if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then systemd=yes; fi  # systemd's own package
if [[ $systemd == yes ]]; then
  systemctl stop pkcsslotd.service
elif [[ -n $slotd ]] && alive "$slotd"; then
  kill -TERM "$slotd"
  for _ in $(seq 50); do alive "$slotd" || break; sleep 0.2; done
  ! alive "$slotd" || die "pkcsslotd (PID $slotd) did not stop within 10 seconds. Nothing was changed."
fi
start_slotd() {
  if [[ $systemd == yes ]]; then systemctl start pkcsslotd.service; return; fi
  # No systemd (a container): the run-time folders from openCryptoki's tmpfiles rule (type path mode user group).
  while read -r type path mode user group _; do
    if [[ $type == [dD] ]]; then install -d -m "$mode" -o "$user" -g "$group" "$path"; fi
  done </usr/lib/tmpfiles.d/opencryptoki.conf
  pkcsslotd
}
# The pkcs11 group may write the store ($store), so a member could rename a folder root works in and put a
# symbolic link in its place. While the slot daemon is stopped the group has no business there: the store is closed
# to it (no group write) until the new folder is in place, and opened again at the end, also after a failure.
store_mode=$(stat -c %a "$store") work=
trap 'if [[ -n $work ]]; then rm -rf "$work"; fi; chmod "$store_mode" "$store"; start_slotd' EXIT
chmod g-w,o-w "$store"
work=$(mktemp -d "$store/.restore.XXXXXX")

(cd "$work" && unpack --extract --same-owner --preserve-permissions)
bad=$(cd "$work" && awk '{ print $1 "  " $4 }' <<<"$sums" | sha256sum --check --quiet 2>&1 || true)
[[ -z $bad ]] || die "The unpacked files differ from $manifest: $bad. Nothing was changed."
while read -r _ mode owner path; do
  [[ $(stat -c '%a %U:%G' "$work/$path") == "$mode $owner" ]] ||
    die "$path came out as $(stat -c '%a %U:%G' "$work/$path"), not $mode $owner as backed up. Nothing was changed."
done <<<"$sums
$folders"

# mv -T renames the folder itself: onto a symbolic link planted before the store was closed it fails, never follows.
if [[ -e $token ]]; then mv -T "$token" "$token.before-restore-$(date -u +%Y%m%dT%H%M%SZ)"; fi
mv -T "$work/$token_dir" "$token" || die "The restored folder could not be put in place at $token (ls -l $token:" \
  "something planted there that is not a folder?). A token folder that was there is now $token.before-restore-<time>."
# The token's shared memory still describes the folder that was there: remove it, as pkcstok_migrate does.
rm -f "$shm"
# SELinux (RHEL): the policy's labels for the folder, whatever the archive's files carried (restorecon is in
# policycoreutils; without SELinux there is nothing to label).
if command -v selinuxenabled >/dev/null && selinuxenabled && command -v restorecon >/dev/null; then
  restorecon -R "$token"
fi
trap - EXIT
rm -rf "$work"
chmod "$store_mode" "$store"
start_slotd
for _ in $(seq 50); do as_admin pkcsconf -s >/dev/null 2>&1 && break; sleep 0.2; done
info=$(as_admin pkcsconf -t -c "$slot" 2>&1) || die "pkcsslotd does not answer after the restore: $info"
grep -q 'TOKEN_INITIALIZED' <<<"$info" ||
  die "The token in slot $slot is not initialised after the restore: pkcsconf -t -c $slot says: $info"
echo "restored $token from $archive (slot $slot, store format $format); the token's PINs are those of the backup:"
grep -E '^[[:space:]]*(Label|Model|Flags):' <<<"$info"
[[ -n ${TOKEN_USER_PIN:-} ]] || exit 0
# The flags first: no login on a token whose user PIN is locked or at its final try.
if grep -qE 'USER_PIN_(LOCKED|FINAL_TRY)' <<<"$info"; then
  die "Not logging in: the user PIN of the token in slot $slot is locked or at its final try (see the flags above)."
fi
keys=$(PKCS11_USER_PIN="$TOKEN_USER_PIN" as_admin p11sak list-key all --slot "$slot" 2>&1) ||
  die "The restored token refused the user PIN in TOKEN_USER_PIN: it needs the PIN it had when the backup was made."
echo "its keys, after a login with the backup's user PIN (S sensitive, X extractable, N never extractable):"
echo "$keys"
