#!/usr/bin/env bash
# Lets members of the pkcs11 group store keys in openCryptoki's tokens: the token folders get group
# pkcs11 and mode 770 (group read/write, nothing for others). Run as root, before init-token.sh.
# Needed on Ubuntu/Debian (openCryptoki 3.23 leaves them root:root 0755); on RHEL/SLES it changes nothing.
set -euo pipefail

store="${OCK_DATA_STORE:-/var/lib/opencryptoki}"
tokens=(swtok lite ccatok ep11tok)   # soft, ICA, CCA and EP11 token folders

die() { echo "$*" >&2; exit 1; }

[[ $EUID -eq 0 ]] || die "Run this as root: it changes the group and mode of the token folders in $store."
getent group pkcs11 >/dev/null || die "Group pkcs11 does not exist: install openCryptoki first."
[[ -d "$store" ]] || die "$store does not exist: install openCryptoki and start pkcsslotd first."

# needs_opening DIR: something below DIR is not group pkcs11, not group-writable, or open to others.
needs_opening() {
  find "$1" \( ! -group pkcs11 -o -perm /o=rwx -o -type d ! -perm -g=rwx -o -type f ! -perm -g=rw \) \
    -print -quit | grep -q .
}

changed=no
for token in "${tokens[@]}"; do
  dir="$store/$token"
  [[ -d "$dir" ]] || continue
  if needs_opening "$dir"; then
    chgrp -R pkcs11 "$dir"
    chmod -R g+rwX,o-rwx "$dir"
    echo "opened $dir to the pkcs11 group"
    changed=yes
  fi
done
[[ $changed == yes ]] || echo "The token folders already belong to the pkcs11 group; nothing changed."
for token in "${tokens[@]}"; do
  [[ -d "$store/$token" ]] && stat -c '%A %U:%G %n' "$store/$token"
done
true
