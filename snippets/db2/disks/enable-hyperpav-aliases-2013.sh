#!/usr/bin/env bash
# Sets the study's four HyperPAV alias devices online with chccwdev (SLES 11); not persistent: see the udev rules file.
# Needs root.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "run this as root: it changes device configuration" >&2; exit 1; }
for cmd in chccwdev lsdasd; do command -v "$cmd" >/dev/null || { echo "$cmd not found: install s390-tools" >&2; exit 1; }; done
for alias in 0.0.71fa 0.0.71fb 0.0.71fc 0.0.71fd; do
  [ -e "/sys/bus/ccw/devices/$alias" ] || { echo "device $alias not found: check the bus ID with lscss" >&2; exit 1; }
  chccwdev -e "$alias"
done
lsdasd -s
