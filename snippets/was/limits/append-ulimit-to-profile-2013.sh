#!/usr/bin/env bash
# The 2013 study's form: raise the open-files limit in a shell profile (SLES 11: /etc/profile.local).
# Run as root: append-ulimit-to-profile-2013.sh [PROFILE]. Works only up to the hard limit; prefer limits.d.
set -euo pipefail

profile="${1:-/etc/profile.local}"
line='ulimit -n 8192'

if [[ ! -d "$(dirname "$profile")" ]]; then
  echo "The directory of $profile does not exist: give the profile script of your distribution." >&2
  exit 1
fi
if [[ -f "$profile" ]] && grep -qxF "$line" "$profile"; then
  echo "$profile already raises the limit; nothing changed."
else
  printf '%s\n' "$line" >>"$profile"
  echo "added '$line' to $profile; it applies to login shells started from now on."
fi
