#!/usr/bin/env bash
# Starts openCryptoki's slot daemon pkcsslotd now and at every boot, and waits for its socket.
# Run as root. Under systemd it enables pkcsslotd.service; in a container without systemd it starts the daemon directly.
set -euo pipefail

[[ $EUID -eq 0 ]] || { echo "Run this as root: pkcsslotd is a system service." >&2; exit 1; }
for cmd in pkcsslotd pkcsconf; do
  command -v "$cmd" >/dev/null || { echo "$cmd is missing: install openCryptoki first." >&2; exit 1; }
done
# openCryptoki serves only members of pkcs11, root included. Its package adds root to the group, but a shell
# started before the install does not have it yet (every openCryptoki call then fails with CKR_HOST_MEMORY).
if ! id -Gn | tr ' ' '\n' | grep -qx pkcs11; then
  echo "This shell is not in the pkcs11 group yet (openCryptoki's package added root to it after the shell" \
       "started): log in again (a new login or 'su -'), then run this step again." >&2
  exit 1
fi

# The daemon counts as up only when it answers: pkcsconf -s lists the slots through its socket.
answers() { pkcsconf -s >/dev/null 2>&1; }

if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then  # systemd runs (its package has systemctl)
  systemctl enable --now pkcsslotd.service
elif ! answers; then
  # No systemd (a container): create /run/opencryptoki and the lock directories as the unit's tmpfiles rule
  # would, with systemd-tmpfiles where it is installed, else from the rule's d/D lines (type path mode user group).
  rule=/usr/lib/tmpfiles.d/opencryptoki.conf
  if command -v systemd-tmpfiles >/dev/null; then
    systemd-tmpfiles --create "$rule"
  else
    while read -r type path mode user group _; do
      if [[ $type == [dD] ]]; then install -d -m "$mode" -o "$user" -g "$group" "$path"; fi
    done < "$rule"
  fi
  pkcsslotd
fi

for _ in $(seq 50); do
  answers && break
  sleep 0.2
done
if ! answers; then
  echo "pkcsslotd did not come up, or does not answer: pkcsconf -s says: $(pkcsconf -s 2>&1 | tail -n 1)" >&2
  echo "See 'journalctl -u pkcsslotd' (or syslog) for the daemon's reason. CKR_HOST_MEMORY or a permission error" \
       "here usually means this shell lacks the pkcs11 group: log in again." >&2
  exit 1
fi
echo "pkcsslotd is running; its slots:"
pkcsconf -s | grep -E '^Slot #|Flags'
