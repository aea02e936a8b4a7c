#!/usr/bin/env bash
# Starts openCryptoki's slot daemon pkcsslotd now and at every boot, and waits for its socket.
# Run as root. Under systemd it enables pkcsslotd.service; in a container without systemd it starts the daemon directly.
set -euo pipefail

[[ $EUID -eq 0 ]] || { echo "Run this as root: pkcsslotd is a system service." >&2; exit 1; }
command -v pkcsslotd >/dev/null || { echo "pkcsslotd is missing: install openCryptoki first." >&2; exit 1; }

if [[ -d /run/systemd/system ]]; then
  systemctl enable --now pkcsslotd.service
elif ! pgrep -x pkcsslotd >/dev/null; then
  # No systemd (a container): create /run/opencryptoki and the lock directories as the unit would.
  systemd-tmpfiles --create /usr/lib/tmpfiles.d/opencryptoki.conf
  pkcsslotd
fi

for _ in $(seq 50); do
  [[ -S /run/opencryptoki/pkcsslotd.socket ]] && pgrep -x pkcsslotd >/dev/null && break
  sleep 0.2
done
if ! [[ -S /run/opencryptoki/pkcsslotd.socket ]]; then
  echo "pkcsslotd did not come up: see 'journalctl -u pkcsslotd' (or syslog) for its reason." >&2
  exit 1
fi
echo "pkcsslotd is running; its slots:"
pkcsconf -s | grep -E '^Slot #|Flags'
