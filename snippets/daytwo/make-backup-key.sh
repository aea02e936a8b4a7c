#!/usr/bin/env bash
# Makes the backup key of the token backups: an age key pair. The secret key goes to KEY_FILE (mode 600); the public
# key is printed as the BACKUP_RECIPIENT line that back-up-token.sh takes. Run it on the machine that will keep the
# secret key offline (a workstation without network, or a machine whose key file then moves to removable media
# kept in a safe), never on the host whose token is backed up: make-backup-key.sh KEY_FILE
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# == 1)) || die "Usage: $0 KEY_FILE (a new file for the secret backup key)"
key=$1
command -v age-keygen >/dev/null || die "age-keygen is missing: install age."
[[ ! -e $key && ! -L $key ]] || die "$key exists: a new key never replaces an old one, which the old backups need."
umask 077
if ! said=$(age-keygen -o "$key" 2>&1); then die "age-keygen could not write $key: $said"; fi
if [[ -d ${OCK_DATA_STORE:-/var/lib/opencryptoki} ]]; then
  echo "Note: this host has an openCryptoki token store. If its tokens are the ones this key backs up, move $key" \
    "offline now and delete it here: a secret key beside the backups it opens protects nothing." >&2
fi
echo "secret key: $key (mode $(stat -c %a "$key")). Keep it offline, with a second copy in another place: without it"
echo "no backup made to it can be restored."
echo "BACKUP_RECIPIENT=$(age-keygen -y "$key")"
