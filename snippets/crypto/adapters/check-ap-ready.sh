#!/usr/bin/env bash
# Waits until the AP bus has bound its queues to drivers and checks that zcrypt serves them, so that
# pkcsslotd and the servers using the ICA token or OpenSSL start after the adapters. Run as any user on
# Linux on IBM Z, or as ExecStartPre= of their units. AP_WAIT_SECONDS (default 30) bounds the wait.
set -euo pipefail

AP_BUS="${AP_BUS:-/sys/bus/ap}"
Z90CRYPT="${Z90CRYPT:-/dev/z90crypt}"
wait_seconds="${AP_WAIT_SECONDS:-30}"

stop() { echo "$*" >&2; exit 1; }

[[ "$(uname -m)" == s390x ]] || stop "This is not Linux on IBM Z (uname -m says $(uname -m))."
[[ "$wait_seconds" =~ ^[0-9]+$ ]] || stop "AP_WAIT_SECONDS must be a number of seconds, not '$wait_seconds'."
[[ -d "$AP_BUS" ]] || stop "No AP bus in $AP_BUS: the kernel has no 'ap' support loaded (modprobe ap)," \
  "or this system has no access to crypto adapters at all."

# The kernel reports "bound/total (complete)" once its scan has bound every AP queue to a driver.
if [[ -r "$AP_BUS/bindings" ]]; then
  deadline=$((SECONDS + wait_seconds))
  until [[ "$(cat "$AP_BUS/bindings")" == *"(complete)"* ]]; do
    ((SECONDS < deadline)) || stop "The AP bus has not bound all its queues to drivers after ${wait_seconds} s" \
      "($AP_BUS/bindings says $(cat "$AP_BUS/bindings")): check 'lszcrypt -V' and the kernel log."
    sleep 1
  done
fi

zcrypt=0 vfio=0 unbound=0
for queue in "$AP_BUS"/devices/*.*; do
  [[ -e "$queue" ]] || continue
  driver=$(basename "$(readlink "$queue/driver" 2>/dev/null || echo none)")
  case "$driver" in
    cex4queue) zcrypt=$((zcrypt + 1)) ;;
    vfio_ap) vfio=$((vfio + 1)) ;;
    *) unbound=$((unbound + 1)) ;;
  esac
done

if ((zcrypt == 0 && vfio > 0)); then
  stop "All $vfio AP queues here are bound to vfio_ap: this is a KVM host that passes them to guests," \
    "so nothing on this host can use them. Run this inside the guest, or give the host its own queues" \
    "(the AP bus's apmask and aqmask)."
fi
((zcrypt > 0)) || stop "No AP queue is assigned to this system: assign an adapter and a domain in the LPAR's" \
  "image profile (HMC/SE), in the z/VM directory (CRYPTO APVIRT or APDED), or, for a KVM guest, on the" \
  "KVM host (vfio-ap mediated device)."
((unbound == 0)) || stop "$unbound AP queue(s) have no driver: load the zcrypt driver (modprobe zcrypt)," \
  "or vfio_ap on a KVM host for the queues it keeps for guests."
[[ -c "$Z90CRYPT" ]] || stop "$Z90CRYPT is missing: load the zcrypt driver (modprobe zcrypt)."

echo "The AP bus is ready: $zcrypt AP queue(s) bound to zcrypt (cex4queue) and $Z90CRYPT is there."
