#!/usr/bin/env bash
# Ubuntu/Debian: install pkcs11-provider, the OpenSSL 3 provider through which httpd uses the key in the token,
# and the openssl command. Run as root. Safe to run twice.
set -euo pipefail

[[ $EUID -eq 0 ]] || { echo "Run this as root: it installs packages." >&2; exit 1; }
command -v apt-get >/dev/null || { echo "apt-get not found: this snippet is for Ubuntu/Debian; see the RHEL/SLES tab." >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends pkcs11-provider openssl
command -v openssl >/dev/null || { echo "openssl is still missing: install the openssl package." >&2; exit 1; }
# OpenSSL loads providers from its module folder (openssl version -m).
modules=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
[[ -f "$modules/pkcs11.so" ]] ||
  { echo "pkcs11-provider put no pkcs11.so into OpenSSL's module folder $modules: reinstall pkcs11-provider." >&2; exit 1; }
echo "pkcs11-provider $(dpkg-query -W -f='${Version}' pkcs11-provider): $modules/pkcs11.so"
