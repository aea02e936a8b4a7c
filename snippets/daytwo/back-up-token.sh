#!/usr/bin/env bash
# Backs up the data store of an openCryptoki token that keeps its keys in files (the ICA and the Soft token): the
# token folder with NVTOK.DAT, MK_SO, MK_USER and TOK_OBJ/, owners and modes kept, as a tar.gz encrypted with age to
# the public key of a backup key whose secret half stays offline, and a manifest beside it (the recipient, the
# archive's sha256, and sha256, owner, group and mode of every file), signed with the backup's signing key
# (ssh-keygen -Y sign) as the manifest's .sig beside it. tar streams into age: no unencrypted archive is written, not
# even for a moment. Run as root, with the signing key brought for the backup only:
#   BACKUP_RECIPIENT=age1... BACKUP_SIGNING_KEY=/path/KEY_FILE.signing-key back-up-token.sh BACKUP_DIR
# Why the signature: anyone who knows the recipient can encrypt an archive of their own to it, and age opens that
# archive as readily as the backup's. Only the signing key, which make-backup-key.sh made beside the backup key,
# shows that this host's backup wrote the manifest, and the manifest names the archive's sha256.
# Why root: stopping the slot daemon (which stops every token on the host) and seeing which processes map the
# token's memory need it. The token folder, which the pkcs11 group may write, is read with that group's rights only
# (as nobody, group pkcs11): a symbolic link a member plants there reaches nothing the group cannot read, and the
# backup refuses a folder that holds anything but plain files and folders.
# Environment (optional): TOKEN_DIR, the token folder (default: lite, the ICA token's, on s390x; swtok, the Soft
# token's, elsewhere; tokname in opencryptoki.conf names another), OCK_DATA_STORE (/var/lib/opencryptoki).
# The slot daemon is stopped while the files are copied and started again afterwards if it was running. Needs
# check-token-not-in-use.sh beside it.
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# == 1)) || die "Usage: BACKUP_RECIPIENT=age1... BACKUP_SIGNING_KEY=KEY_FILE.signing-key $0 BACKUP_DIR (a folder" \
  "for the archive, its manifest and the manifest's signature)"
backup_dir=$1
store="${OCK_DATA_STORE:-/var/lib/opencryptoki}"
if [[ $(uname -m) == s390x ]]; then default_dir=lite; else default_dir=swtok; fi
token_dir="${TOKEN_DIR:-$default_dir}"
token="$store/$token_dir"
pidfile=/run/opencryptoki/pkcsslotd.pid
recipient="${BACKUP_RECIPIENT:-}"
signing_key="${BACKUP_SIGNING_KEY:-}"
namespace=zrunbook-token-backup  # the signature's, as make-backup-key.sh allows it and restore-token.sh checks it

[[ -n $recipient ]] || die "Set BACKUP_RECIPIENT to the public key (age1...) of your offline backup key" \
  "(make-backup-key.sh makes one): this script writes no unencrypted archive. Nothing was copied."
[[ $recipient != AGE-SECRET-KEY-* ]] || die "BACKUP_RECIPIENT holds a secret key. Give its public key (age1...," \
  "what age-keygen -y prints); the secret key belongs offline, not on this host. Nothing was copied."
[[ $EUID -eq 0 ]] || die "Run this as root: it stops the slot daemon and reads which processes use the token."
for tool in pkcsslotd age setpriv ssh-keygen; do
  command -v "$tool" >/dev/null ||
    die "$tool is missing: install openCryptoki, age, util-linux and openssh-client. Nothing was copied."
done
age --encrypt --recipient "$recipient" </dev/null >/dev/null 2>&1 ||
  die "BACKUP_RECIPIENT is not an age public key: '$recipient'. Nothing was copied."
[[ -n $signing_key ]] || die "Set BACKUP_SIGNING_KEY to the signing key make-backup-key.sh made beside the backup key" \
  "(KEY_FILE.signing-key), brought to this host for the backup: without a signature the restore cannot tell this" \
  "backup from one forged with the public recipient. Nothing was copied."
[[ -f $signing_key && -r $signing_key ]] || die "Cannot read the signing key in BACKUP_SIGNING_KEY ($signing_key):" \
  "bring KEY_FILE.signing-key from where make-backup-key.sh's keys are kept. Nothing was copied."
[[ $(stat -L -c %a "$signing_key") == [0-7]00 ]] || die "Refused: the signing key $signing_key may be read by" \
  "others (mode $(stat -L -c %a "$signing_key")): chmod 600 it, and remove it from this host after the backup." \
  "Nothing was copied."
# A private key without a passphrase (the signature is made without a prompt); -P '' never prompts.
signer=$(ssh-keygen -l -f <(ssh-keygen -y -P '' -f "$signing_key" 2>/dev/null) 2>/dev/null | awk '{ print $2 }') ||
  signer=
[[ $signer == SHA256:* ]] || die "BACKUP_SIGNING_KEY ($signing_key) is not a signing key of make-backup-key.sh (an" \
  "OpenSSH private key without a passphrase; KEY_FILE.signing-key, not the .allowed_signers file). Nothing was copied."
[[ $token_dir =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]*$ ]] || die "TOKEN_DIR must be a folder name under $store, not '$token_dir'."
[[ ! -L $token ]] || die "Refused: $token is a symbolic link, which openCryptoki never makes. Nothing was copied."
[[ -d $token ]] || die "$token does not exist: set TOKEN_DIR to the token's folder (ls $store)."
getent group pkcs11 >/dev/null || die "Group pkcs11 does not exist: install openCryptoki first."
[[ $(stat -c %G "$token") == pkcs11 ]] || die "$token does not belong to the pkcs11 group: open it to the group" \
  "first (let-pkcs11-group-store-keys.sh); this backup reads it with that group's rights. Nothing was copied."
# openCryptoki writes only plain files and folders with plain names here. Anything else was put there by hand or by
# a member of the pkcs11 group: a symbolic link, a hard link or a FIFO can make a tool that root runs read or write
# another file, or hang (CVE-2026-23893). find does not follow symbolic links.
odd=$(find "$token" -type l -printf '%p, a symbolic link to %l\n' -o ! -type f ! -type d -printf '%p, of type %y\n' \
  -o -type f -links +1 -printf '%p, a hard link\n' -o -name '*[!A-Za-z0-9._-]*' -printf '%p, an odd name\n' | head -n 5)
[[ -z $odd ]] || die "Refused: $token holds what openCryptoki never writes: ${odd//$'\n'/; }. A member of the pkcs11" \
  "group may have planted it. Look at it, remove it, and ask who put it there. Nothing was copied."
missing=()
for part in NVTOK.DAT MK_SO MK_USER; do [[ -f $token/$part ]] || missing+=("$part"); done
[[ -d $token/TOK_OBJ ]] || missing+=(TOK_OBJ)
((${#missing[@]} == 0)) ||
  die "$token lacks ${missing[*]}: it is not an initialised token with a user PIN, so there is nothing to back up."
case $token_dir in
  ccatok* | ep11tok*)
    echo "Note: $token_dir looks like a CCA or EP11 token folder. Its keys are secure keys, wrapped by the adapters'" \
      "master key: the archive is usable only where the adapter domains carry the same master key." >&2 ;;
esac
mkdir -p "$backup_dir"
# The token folder is read as nobody with group pkcs11 and no other group: the rights of any member of the group.
as_group() { setpriv --reuid=nobody --regid=pkcs11 --clear-groups -- "$@"; }

slotd=$(cat "$pidfile" 2>/dev/null || true)
# No program may use the token meanwhile: the check beside this script names those that do.
check="$(dirname "$0")/check-token-not-in-use.sh"
[[ -r $check ]] || die "$check is missing: keep check-token-not-in-use.sh beside this script (the same page has it)."
bash "$check" "$token_dir" >/dev/null || die "Nothing was copied."
# Running, and not a zombie (it has exited). The status is read once: a zombie reaped between two reads must not
# count as running.
alive() { local st; st=$(cat "/proc/$1/status" 2>/dev/null) || return 1; ! grep -q '^State:[[:space:]]*Z' <<<"$st"; }

# Stop the slot daemon for the copy, so that no program can open the token meanwhile; start it again at the end.
# There is one slot daemon per host: while it is stopped, no token on this host can be opened.
systemd=no
if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then systemd=yes; fi  # systemd's own package
running=no
if [[ -n $slotd ]] && alive "$slotd"; then running=yes; fi
stamp=$(date -u +%Y%m%dT%H%M%SZ)
name="opencryptoki-$token_dir-$(hostname -s)-$stamp"
archive="$backup_dir/$name.tar.gz.age"
manifest="$backup_dir/$name.manifest"
partial="$archive.partial"
kept=no  # until the manifest is signed, a failure removes what was written
finish() {
  rm -f "$partial"
  if [[ $kept == no ]]; then rm -f "$archive" "$manifest" "$manifest.sig"; fi
  [[ $running == yes ]] || return 0
  if [[ $systemd == yes ]]; then systemctl start pkcsslotd.service; else pkcsslotd; fi
}
if [[ $running == yes ]]; then
  if [[ $systemd == yes ]]; then systemctl stop pkcsslotd.service; else kill -TERM "$slotd"; fi
  for _ in $(seq 50); do alive "$slotd" || break; sleep 0.2; done
  ! alive "$slotd" || die "pkcsslotd (PID $slotd) did not stop within 10 seconds; nothing was copied."
fi
trap finish EXIT

umask 077
# Owners and groups by name (the pkcs11 group's number can differ on the host you restore to). tar reads the folder
# with the group's rights and writes to a pipe; age encrypts what comes through it.
if ! as_group tar --create --gzip --file - --directory "$store" "$token_dir" |
  age --encrypt --recipient "$recipient" --output "$partial"; then
  die "The archive was not written (tar or age said why above): a file in $token that the pkcs11 group cannot read" \
    "stops the backup. Nothing was kept."
fi
mv "$partial" "$archive"
# The format of the store: openCryptoki 3.12 and later write 40-byte master-key files (AES key wrap); older
# stores, and tokens without "tokversion = 3.12" in opencryptoki.conf, have larger ones.
if [[ $(stat -c %s "$token/MK_SO") == 40 ]]; then format=3.12; else format=pre-3.12; fi
# One line per file and folder, read with the group's rights too: "sha256 (or: directory) mode owner:group path".
# The manifest holds no secret (a hash does not give back the file, so it lets nobody test a PIN) and stays plain
# beside the archive: anyone can check a copy against it. What makes it the backup's is its signature: the restore
# checks that first, then the archive's sha256, and only then decrypts.
if ! sums=$(cd "$store" && as_group find "$token_dir" -type f -exec sha256sum {} +) ||
  ! modes=$(cd "$store" && as_group find "$token_dir" -printf '%y %m %u:%g %p\n' | sort -k4); then
  die "The files of $token could not be read with the pkcs11 group's rights."
fi
entries=$(awk 'NR == FNR { sum[$2] = $1; next } { print ($1 == "d" ? "directory" : sum[$4]), $2, $3, $4 }' \
  <(echo "$sums") <(echo "$modes"))
{
  echo "# openCryptoki token backup: $archive"
  echo "token-dir: $token_dir"
  echo "store: $store"
  echo "store-format: $format"
  echo "host: $(hostname -f 2>/dev/null || hostname) ($(uname -m))"
  echo "made: $stamp"
  echo "recipient: $recipient"
  echo "signing-key: $signer"
  echo "archive-sha256: $(sha256sum "$archive" | cut -d' ' -f1)"
  echo "# sha256 (or: directory) mode owner:group path"
  echo "$entries"
} >"$manifest"
# ssh-keygen writes the signature to $manifest.sig (and keeps a file already there, after a question nobody answers).
rm -f "$manifest.sig"
if ! said=$(ssh-keygen -Y sign -q -f "$signing_key" -n "$namespace" "$manifest" 2>&1 </dev/null); then
  die "The manifest could not be signed with $signing_key (ssh-keygen: $said). Nothing was kept."
fi
kept=yes
files=$(grep -c '^[0-9a-f]\{64\} ' "$manifest")
echo "backed up $token ($files files, store format $format) to $archive"
echo "encrypted to $recipient: only the secret key of that recipient opens it"
echo "manifest: $manifest"
echo "signed: $manifest.sig (signing key $signer); remove the signing key from this host now"
