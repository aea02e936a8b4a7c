#!/usr/bin/env bash
# Sets the database LPAR's four HyperPAV alias devices online now and at every boot (chzdev, s390-tools 1.34+). Needs root.
# The alias bus IDs are the study's (0.0.71fa-0.0.71fd); use yours, as lsdasd or lscss lists them.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "run this as root: it changes device configuration" >&2; exit 1; }
for cmd in chzdev lsdasd; do
  command -v "$cmd" >/dev/null || { echo "$cmd not found: install s390-tools (s390utils-base on RHEL)" >&2; exit 1; }
done
for alias in 0.0.71fa 0.0.71fb 0.0.71fc 0.0.71fd; do
  [ -e "/sys/bus/ccw/devices/$alias" ] || { echo "device $alias not found: check the bus ID with lscss" >&2; exit 1; }
done
chzdev --enable dasd-eckd 0.0.71fa-0.0.71fd
lsdasd -s
