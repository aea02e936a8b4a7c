#!/usr/bin/env bash
# Sets the inbound buffer count of a qeth device (OSA or HiperSockets) with chzdev; persistent, and now if present.
# Run as root: set-qeth-buffer-count.sh READ:WRITE:DATA [COUNT]   e.g. 0.0.8000:0.0.8001:0.0.8002 128
set -euo pipefail

ids="${1:-}"
count="${2:-128}"

if [[ ! "$ids" =~ ^[0-9a-f]\.[0-9a-f]\.[0-9a-f]{4}:[0-9a-f]\.[0-9a-f]\.[0-9a-f]{4}:[0-9a-f]\.[0-9a-f]\.[0-9a-f]{4}$ ]]; then
  echo "Give the device's three bus IDs as lsqeth shows them (cdev0:cdev1:cdev2), e.g. 0.0.8000:0.0.8001:0.0.8002." >&2
  exit 2
fi
if [[ ! "$count" =~ ^[0-9]+$ ]] || (( count < 8 || count > 128 )); then
  echo "The buffer count must be between 8 and 128 (the qeth driver's range), not '$count'." >&2
  exit 2
fi
command -v chzdev >/dev/null || { echo "chzdev is missing: install s390-tools (s390utils on RHEL)." >&2; exit 1; }

# The persistent configuration (a udev rule under /etc/udev/rules.d) applies from the next boot on.
chzdev --enable --persistent qeth "$ids" buffer_count="$count"
first="${ids%%:*}"
if [[ -e "/sys/bus/ccwgroup/devices/$first" ]]; then
  # buffer_count changes only while the device is offline: expect a short interruption of the interface.
  chzdev --enable --active qeth "$ids" buffer_count="$count"
  echo "buffer_count is now $(cat "/sys/bus/ccwgroup/devices/$first/buffer_count") on $first"
else
  echo "$first is not in the active configuration; the setting takes effect when the device is set up."
fi
