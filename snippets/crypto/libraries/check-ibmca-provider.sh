#!/usr/bin/env bash
# Check that an OpenSSL configuration activates the ibmca provider next to the default provider,
# that ordinary algorithms still work with it, and what ibmca took over. IBM Z only; no root needed.
# Usage: check-ibmca-provider.sh [config]   (default: /etc/ssl/openssl-ibmca-provider.conf)
set -euo pipefail

conf="${1:-/etc/ssl/openssl-ibmca-provider.conf}"

if [[ $(uname -m) != s390x ]]; then
  echo "This machine is $(uname -m), not IBM Z: the ibmca provider exists only for s390x." >&2
  exit 1
fi
if ! command -v openssl >/dev/null 2>&1; then
  echo "The openssl command is missing: install the openssl package." >&2
  exit 1
fi
version=$(openssl version | awk '{print $2}')
if [[ $version != 3.* ]]; then
  echo "OpenSSL $version is not 3.x: the ibmca provider needs OpenSSL 3 (1.x has the engine)." >&2
  exit 1
fi
if [[ ! -r $conf ]]; then
  echo "Cannot read $conf: install the configuration there first, or name it as the argument." >&2
  exit 1
fi
modules=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
if [[ ! -f $modules/ibmca-provider.so ]]; then
  echo "$modules/ibmca-provider.so is missing: install openssl-ibmca-provider (SLES)" \
       "or openssl-ibmca 2.x (Ubuntu; Debian only from sid)." >&2
  exit 1
fi

if ! providers=$(OPENSSL_CONF=$conf openssl list -providers 2>&1); then
  printf 'OpenSSL cannot load %s:\n%s\n' "$conf" "$providers" >&2
  exit 1
fi
active=$(awk '/^  [^ ]/ {name = $1} /^    status: active/ {print name}' <<<"$providers")
if ! grep -qx ibmca <<<"$active"; then
  echo "$conf does not activate the ibmca provider (identity = ibmca, activate = 1)." >&2
  exit 1
fi
if ! grep -qvx ibmca <<<"$active"; then
  echo "Only ibmca is active: set activate = 1 in the default provider's section, or every digest," \
       "cipher and TLS handshake fails." >&2
  exit 1
fi
if ! OPENSSL_CONF=$conf openssl dgst -sha256 "$conf" >/dev/null 2>&1; then
  echo "SHA-256 fails with $conf: no active provider offers it (is default active?)." >&2
  exit 1
fi
echo "active providers: $(paste -sd ' ' <<<"$active")"
echo "SHA-256 works with this configuration"

taken=$(OPENSSL_CONF=$conf openssl list -key-managers \
  | awk '/^  Name: IBMCA / {print $3}')
if [[ -n $taken ]]; then
  echo "ibmca took over: $(paste -sd ' ' <<<"$taken")"
else
  echo "ibmca took over nothing: libica found no Crypto Express adapter (see lszcrypt)."
  echo "RSA, EC and DH stay with the default provider."
fi
