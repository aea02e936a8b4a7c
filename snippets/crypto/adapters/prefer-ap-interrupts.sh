#!/usr/bin/env bash
# Uses adapter interrupts instead of zcrypt's polling thread where the AP bus has them, and shows the AP bus state.
# Run as root on Linux on IBM Z (s390-tools). AP_POLL_THREAD=on|off overrides the choice (on: throughput over CPU).
set -euo pipefail

AP_BUS="${AP_BUS:-/sys/bus/ap}"
want="${AP_POLL_THREAD:-auto}"

[[ "$(uname -m)" == s390x ]] || { echo "This is not Linux on IBM Z (uname -m says $(uname -m))." >&2; exit 1; }
for tool in lszcrypt chzcrypt; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: install s390-tools (s390utils-base on RHEL)." >&2; exit 1; }
done
[[ "$want" =~ ^(auto|on|off)$ ]] || { echo "AP_POLL_THREAD must be auto, on or off, not '$want'." >&2; exit 1; }
if [[ ! -d "$AP_BUS" ]]; then
  echo "No AP bus in $AP_BUS: the kernel has no 'ap' support loaded (modprobe ap), or this system" \
    "has no access to crypto adapters at all." >&2
  exit 1
fi

interrupts=$(cat "$AP_BUS/ap_interrupts" 2>/dev/null || echo 0)
poll=$(cat "$AP_BUS/poll_thread" 2>/dev/null || echo 0)
target=$poll
case "$want" in
  auto) [[ "$interrupts" == 1 ]] && target=0 ;;   # with interrupts the polling thread only burns CPU
  on) target=1 ;;
  off) target=0 ;;
esac
if [[ "$want" == auto && "$interrupts" != 1 ]]; then
  echo "The AP bus has no adapter interrupts here: zcrypt polls; the polling thread stays $([[ $poll == 1 ]] && echo on || echo off)."
fi

if [[ "$target" == "$poll" ]]; then
  echo "Polling thread already $([[ $poll == 1 ]] && echo on || echo off); nothing changed."
else
  [[ $EUID -eq 0 ]] || { echo "Only root can change the polling thread: run this again as root." >&2; exit 1; }
  if [[ "$target" == 1 ]]; then chzcrypt -p; else chzcrypt -n; fi
  echo "Polling thread turned $([[ $target == 1 ]] && echo on || echo off)."
fi
lszcrypt -b
