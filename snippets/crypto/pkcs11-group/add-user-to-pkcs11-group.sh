#!/usr/bin/env bash
# Adds an existing user to openCryptoki's pkcs11 group and keeps every other group the user has.
# Run as root: add-user-to-pkcs11-group.sh USER (or SERVICE_USER=USER in the environment).
set -euo pipefail

user="${1:-${SERVICE_USER:-}}"
if [[ -z "$user" ]]; then
  echo "Name the user to add: give it as the first argument or set SERVICE_USER." >&2
  exit 2
fi
if ! id "$user" >/dev/null 2>&1; then
  echo "User '$user' does not exist: create it first (or install the product that creates it)." >&2
  exit 1
fi
if ! getent group pkcs11 >/dev/null; then
  echo "Group pkcs11 does not exist: install openCryptoki first, its package creates the group." >&2
  exit 1
fi

if id -nG "$user" | tr ' ' '\n' | grep -qx pkcs11; then
  echo "$user is already in pkcs11; nothing changed."
else
  if [[ $EUID -ne 0 ]]; then
    echo "Only root can change group membership: run this again as root (for example with sudo)." >&2
    exit 1
  fi
  # -a appends: without it, usermod -G replaces the user's supplementary groups with this list.
  usermod -a -G pkcs11 "$user"
  echo "$user added to pkcs11. Restart the user's running processes so they get the new group."
fi
echo "$user is in: $(id -nG "$user")"
