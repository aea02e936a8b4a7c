#!/usr/bin/env bash
# Makes the keys of the token backups: an age key pair, whose secret key goes to KEY_FILE (mode 600) and whose public
# key is printed as the BACKUP_RECIPIENT line that back-up-token.sh takes; and a signing key (ed25519, OpenSSH's
# ssh-keygen), whose private key goes to KEY_FILE.signing-key (mode 600) and whose public key goes to
# KEY_FILE.allowed_signers, the file restore-token.sh checks the manifest's signature with. Run it on the machine that
# will keep the secret keys offline (a workstation without network, or a machine whose key files then move to
# removable media kept in a safe), never on the host whose token is backed up: make-backup-key.sh KEY_FILE
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# == 1)) || die "Usage: $0 KEY_FILE (a new file for the secret backup key; the signing key goes beside it)"
key=$1
signing="$key.signing-key" allowed="$key.allowed_signers"
namespace=zrunbook-token-backup principal=token-backup  # what back-up-token.sh signs with, restore-token.sh checks
command -v age-keygen >/dev/null || die "age-keygen is missing: install age."
command -v ssh-keygen >/dev/null || die "ssh-keygen is missing: install OpenSSH's client (openssh-client)."
for file in "$key" "$signing" "$signing.pub" "$allowed"; do
  [[ ! -e $file && ! -L $file ]] || die "$file exists: a new key never replaces an old one, which the old backups need."
done
umask 077
if ! said=$(age-keygen -o "$key" 2>&1); then die "age-keygen could not write $key: $said"; fi
# No passphrase: back-up-token.sh signs without a prompt. What guards the signing key is where it is kept.
if ! said=$(ssh-keygen -q -t ed25519 -N '' -C "$principal" -f "$signing" </dev/null 2>&1); then
  rm -f "$key" "$signing" "$signing.pub"
  die "ssh-keygen could not write $signing: $said. Nothing was kept."
fi
# The allowed signers line (man 1 ssh-keygen, ALLOWED SIGNERS): the principal, the one namespace, the public key.
read -r type public _ <"$signing.pub"
echo "$principal namespaces=\"$namespace\" $type $public" >"$allowed"
rm -f "$signing.pub"
chmod 644 "$allowed"
if [[ -d ${OCK_DATA_STORE:-/var/lib/opencryptoki} ]]; then
  echo "Note: this host has an openCryptoki token store. If its tokens are the ones these keys back up, move $key" \
    "and $signing offline now and delete them here: a secret key beside the backups it opens protects nothing," \
    "and a signing key beside them lets whoever reaches them sign a forged backup." >&2
fi
echo "secret key: $key (mode $(stat -c %a "$key")). Keep it offline, with a second copy in another place: without it"
echo "no backup made to it can be restored."
echo "signing key: $signing (mode $(stat -c %a "$signing")). Keep it offline too, apart from the secret key; bring it"
echo "to a host only for a backup (BACKUP_SIGNING_KEY)."
echo "allowed signers: $allowed (public: copy it to the hosts you restore to)"
echo "BACKUP_RECIPIENT=$(age-keygen -y "$key")"
