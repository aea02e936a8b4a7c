#!/usr/bin/env bash
# Checks that Linux sees the Crypto Express adapters assigned to this LPAR or guest, and lists them.
# Run as any user on Linux on IBM Z; needs s390-tools (lszcrypt). Changes nothing.
set -euo pipefail

[[ "$(uname -m)" == s390x ]] || { echo "This is not Linux on IBM Z (uname -m says $(uname -m))." >&2; exit 1; }
command -v lszcrypt >/dev/null || { echo "lszcrypt is missing: install s390-tools (s390utils-base on RHEL)." >&2; exit 1; }
if [[ ! -d /sys/bus/ap ]]; then
  echo "No AP bus in /sys/bus/ap: the kernel has no 'ap' support loaded (modprobe ap), or this system" \
    "has no access to crypto adapters at all." >&2
  exit 1
fi
if [[ -z "$(ls /sys/bus/ap/devices 2>/dev/null)" ]]; then
  echo "The AP bus is there but no adapter or domain is assigned to this system: assign one in the LPAR's" \
    "image profile (HMC/SE) or the z/VM directory (CRYPTO APVIRT or APDED), or to the KVM guest." >&2
  exit 1
fi
[[ -c /dev/z90crypt ]] || echo "Note: /dev/z90crypt is missing: load the zcrypt driver (modprobe zcrypt)." >&2
lszcrypt -V
