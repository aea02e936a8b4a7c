#!/usr/bin/env bash
# Installs OpenSSL's FIPS provider on Debian 13 (the module fips.so only; enable-openssl-fips-provider.sh then
# writes its configuration). Run as root.
set -euo pipefail
[[ $EUID -eq 0 ]] || { echo "Run this as root: it installs a package." >&2; exit 1; }
apt-get install -y --no-install-recommends openssl-provider-fips
