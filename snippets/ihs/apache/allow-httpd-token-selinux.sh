#!/usr/bin/env bash
# SELinux (RHEL): lets httpd (domain httpd_t) use openCryptoki, that is pkcsslotd's socket, the token's shared
# memory, its lock files and its folder, by turning the boolean httpd_use_opencryptoki on for good (it is off by
# default), then asks the loaded policy whether httpd_t may also open /dev/z90crypt (every domain may since
# selinux-policy 40.13.2-1, RHEL-28539, which every RHEL 10 carries). Run as root. Needs policycoreutils
# (getenforce, getsebool, setsebool); sesearch (setools-console) for the z90crypt question. Safe to run twice.
set -euo pipefail

die() { echo "allow-httpd-token-selinux: $*" >&2; exit 1; }
((EUID == 0)) || die "run as root: setsebool -P changes the policy."
command -v getenforce >/dev/null || die "getenforce is missing: this step is for a system with SELinux; install policycoreutils (RHEL), or skip it where the system has no SELinux."
mode=$(getenforce)
if [[ $mode == Disabled ]]; then
  echo "SELinux is disabled here: nothing to allow."
  exit 0
fi
for tool in getsebool setsebool; do
  command -v "$tool" >/dev/null || die "$tool is missing: install policycoreutils."
done
getsebool httpd_use_opencryptoki >/dev/null 2>&1 ||
  die "this policy has no boolean httpd_use_opencryptoki: look for the denials httpd meets (ausearch -m avc -c httpd) instead."

setsebool -P httpd_use_opencryptoki on
state=$(getsebool httpd_use_opencryptoki)
[[ $state == *"--> on"* ]] || die "httpd_use_opencryptoki is still off after setsebool -P ($state)."
echo "SELinux ($mode): httpd_use_opencryptoki is on: httpd may use openCryptoki's socket, shared memory, locks and token folder."

# /dev/z90crypt is crypt_device_t. Without an allow rule for httpd_t the ICA token's RSA falls back to software in
# libica, and OpenSSL 3.2's own use of the adapter does too, with no error in httpd's log.
if ! command -v sesearch >/dev/null; then
  echo "Cannot tell whether httpd may open /dev/z90crypt: install setools-console (sesearch), or look for denials after a handshake (ausearch -m avc -c httpd)." >&2
  exit 0
fi
if [[ -n $(sesearch --allow -s httpd_t -t crypt_device_t -c chr_file -p open 2>/dev/null) ]]; then
  echo "The loaded policy lets httpd open /dev/z90crypt (crypt_device_t)."
else
  echo "allow-httpd-token-selinux: the loaded policy does not let httpd open /dev/z90crypt: RSA will run in software. Update selinux-policy (RHEL 10: 40.13.2-1 or later has the rule for every domain), or allow the access ausearch -m avc -c httpd names in a local module." >&2
  exit 1
fi
