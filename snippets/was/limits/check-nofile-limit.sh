#!/usr/bin/env bash
# Shows the open-files limit a login shell of the WebSphere user gets and fails when it is below 8192.
# Run as root: check-nofile-limit.sh USER (default wasadmin); it logs in with su -, as an operator would.
set -euo pipefail

user="${1:-wasadmin}"
required=8192

if [[ $EUID -ne 0 ]]; then
  echo "Run this as root: it uses su - to log in as $user without a password." >&2
  exit 1
fi
if ! id "$user" >/dev/null 2>&1; then
  echo "User '$user' does not exist: name the user that runs WebSphere as the first argument." >&2
  exit 1
fi

# The limits are read inside the user's login shell, hence the single quotes.
# shellcheck disable=SC2016
read -r soft hard < <(su - "$user" -s /bin/bash -c 'echo "$(ulimit -Sn) $(ulimit -Hn)"' | tail -n 1)
echo "open files for $user: soft $soft, hard $hard"
if [[ "$soft" != unlimited ]] && (( soft < required )); then
  echo "The soft limit $soft is below $required: install 90-websphere-nofile.conf in /etc/security/limits.d" \
    "and log in again." >&2
  exit 1
fi
echo "ok: at least $required open files"
