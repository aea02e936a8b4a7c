#!/usr/bin/env bash
# Proves that work sent to openCryptoki's ICA token reaches libica and CPACF: resets your icastats
# counters, hashes 1 MiB with SHA-512 through the token (pkcs11-tool, package opensc), reads them back.
# Run as a member of pkcs11 with pkcsslotd running. Optional: TOKEN_SLOT, PKCS11_MODULE.
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
[[ $(uname -m) == s390x ]] ||
  die "This is not IBM Z ($(uname -m)): libica and the ICA token exist only on s390x; nothing to install here."
for tool in icastats pkcs11-tool pkcsconf; do
  command -v "$tool" >/dev/null || die "$tool is missing: install libica's tools, opensc and openCryptoki."
done
pkcsconf -s >/dev/null 2>&1 ||
  die "pkcsslotd is not running or does not answer this shell: start it (systemctl enable --now pkcsslotd)."

module="${PKCS11_MODULE:-}"
if [[ -z "$module" ]]; then
  for candidate in /usr/lib64/opencryptoki/libopencryptoki.so /usr/lib/*/pkcs11/libopencryptoki.so; do
    [[ -e "$candidate" ]] && { module=$candidate; break; }
  done
fi
[[ -n "$module" && -e "$module" ]] || die "openCryptoki's library was not found: set PKCS11_MODULE to its path."

slot="${TOKEN_SLOT:-$(pkcsconf -t | awk '/^Token #/ { s = substr($2, 2) } /Model:[[:space:]]*(IBM )?ICA[[:space:]]*$/ { print s; exit }')}"
[[ -n "$slot" ]] || die "No ICA token in 'pkcsconf -t': this check needs the ICA token (IBM Z only)."

icastats -r
head -c 1048576 /dev/zero | pkcs11-tool --module "$module" --slot "$slot" --hash --mechanism SHA512 >/dev/null 2>&1 ||
  die "The ICA token in slot $slot did not compute SHA-512 (pkcs11-tool failed)."

read -r hardware software < <(icastats | awk -F'|' '$1 ~ /^ *SHA-512 *$/ { print $2 + 0, $3 + 0 }')
echo "SHA-512 through the ICA token in slot $slot: $hardware in hardware, $software in software (icastats)."
(( hardware > 0 )) || die "libica did the SHA-512 work in software: check that icainfo shows SHA-512 in hardware."
