#!/usr/bin/env bash
# On the KVM host: take the APQNs a vfio-ap mediated device names away from the host's own zcrypt driver (for
# now and at every boot, with chzdev), then define the device with mdevctl so that it is created at every boot,
# and start it. Prints the device's UUID for the guest's hostdev element.
# Usage: define-vfio-ap-mdev.sh FILE.json   (mdevctl's JSON, with assign_adapter and assign_domain attributes)
# Run as root on a KVM host on IBM Z; needs s390-tools 2.22 or later (chzdev's ap type) and mdevctl.
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# == 1)) || die "Usage: $0 FILE.json"
json=$1
[[ -r $json ]] || die "Cannot read $json."
[[ $EUID -eq 0 ]] || die "Run this as root: it changes the AP bus masks and defines a mediated device."
[[ $(uname -m) == s390x ]] ||
  die "This is not IBM Z ($(uname -m)): Crypto Express queues exist only on the KVM host of an IBM Z (s390x)."
command -v mdevctl >/dev/null || die "mdevctl is missing: install the mdevctl package."
command -v chzdev >/dev/null || die "chzdev is missing: install s390-tools (2.22 or later)."
[[ -d /sys/bus/ap ]] || die "This system has no AP bus: run this on the KVM host of an IBM Z, not in a guest."
[[ -d /sys/devices/vfio_ap/matrix ]] ||
  die "The vfio_ap driver is not loaded: modprobe vfio_ap, and list it in /etc/modules-load.d/ for every boot."

# The numbers of "assign_adapter" and "assign_domain" in the file (one attribute per object, as mdevctl writes),
# in decimal: lszcrypt's hexadecimal 0a.000d is adapter 10, domain 13.
values() { sed -n "s/.*\"$1\" *: *\"\\([^\"]*\\)\".*/\\1/p" "$json" | paste -sd, -; }
adapters=$(values assign_adapter)
domains=$(values assign_domain)
[[ -n $adapters && -n $domains ]] || die "$json names no assign_adapter or no assign_domain attribute."
[[ $adapters,$domains =~ ^([0-9]|[1-9][0-9]+)(,([0-9]|[1-9][0-9]+))*$ ]] ||
  die "$json gives adapters '$adapters' and domains '$domains': write them in decimal (lszcrypt's 0a.000d is 10 and 13)."

# The host's zcrypt driver gives up these adapters and domains (the leading - takes them out of the mask), now
# and in the persistent configuration; vfio_ap then binds their queues.
chzdev --type ap "apmask=-${adapters//,/,-}" "aqmask=-${domains//,/,-}"
uuid=$(mdevctl define --parent matrix --jsonfile "$json")
mdevctl start --uuid "$uuid"
echo "vfio-ap device $uuid defined (started now and at every boot): adapters $adapters, domains $domains"
