#!/usr/bin/env bash
# Sets up OpenSSL 3's FIPS provider on Debian 13 (package openssl-provider-fips): writes the module's
# configuration /etc/ssl/fipsmodule.cnf with openssl fipsinstall (its integrity MAC and self-test settings) and
# verifies it. Run as root, again after every update of the package: the MAC is the module's checksum.
# Not for RHEL, whose OpenSSL ties its FIPS provider to the system's FIPS mode and has no fipsinstall command.
set -euo pipefail

FIPS_MODULE_CONF="${FIPS_MODULE_CONF:-/etc/ssl/fipsmodule.cnf}"
die() { echo "$*" >&2; exit 1; }
[[ $EUID -eq 0 ]] || die "Run this as root: it writes $FIPS_MODULE_CONF."
command -v openssl >/dev/null || die "openssl is missing: install the openssl package."
modules=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
[[ -f $modules/fips.so ]] || die "OpenSSL's FIPS provider is missing (no fips.so in ${modules:-the modules folder}):" \
  "install openssl-provider-fips (Debian 13)."
fipsinstall_help=$(openssl fipsinstall -help 2>&1 || true)
[[ $fipsinstall_help == *-module* ]] ||
  die "this openssl has no fipsinstall command (RHEL's does not): use your distribution's FIPS mode instead."

# The module runs its self-tests and checks its MAC here; a failure stops the script before anything is written.
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
openssl fipsinstall -module "$modules/fips.so" -out "$tmp" 2>&1 | tail -n 1
install -m 0644 "$tmp" "$FIPS_MODULE_CONF"
openssl fipsinstall -module "$modules/fips.so" -in "$FIPS_MODULE_CONF" -verify 2>&1 | tail -n 1
echo "FIPS module configuration: $FIPS_MODULE_CONF (module $modules/fips.so)"
