#!/usr/bin/env bash
# Make httpd (only httpd) start with OPENSSL_CONF pointing at the pkcs11-provider configuration.
# Run as root, again to switch (OPENSSL_PKCS11_CONF=another file; it replaces the line). Debian/Ubuntu: a line in
# /etc/apache2/envvars; RHEL/SLES: a systemd drop-in for the unit.
set -euo pipefail

OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
line="export OPENSSL_CONF=$OPENSSL_PKCS11_CONF"

[[ $EUID -eq 0 ]] || { echo "Run this as root." >&2; exit 1; }
[[ -f "$OPENSSL_PKCS11_CONF" ]] || { echo "$OPENSSL_PKCS11_CONF does not exist: install it first." >&2; exit 1; }

envvars=/etc/apache2/envvars
if [[ -f $envvars ]]; then
    # One OPENSSL_CONF line, the one asked for: an earlier one (the FIPS file's, or back) is replaced, not kept
    # beside it, since the last line wins and a duplicate would hide which file httpd reads.
    lines=$(grep -c '^[[:space:]]*export OPENSSL_CONF=' "$envvars" || true)
    if [[ $lines == 1 ]] && grep -qxF "$line" "$envvars"; then
        echo "$envvars sets OPENSSL_CONF=$OPENSSL_PKCS11_CONF already"
    else
        [[ -w $envvars ]] || { echo "Cannot write $envvars." >&2; exit 1; }
        sed -i '/^[[:space:]]*export OPENSSL_CONF=/d' "$envvars"
        echo "$line" >> "$envvars"
        echo "set in $envvars: $line (earlier OPENSSL_CONF lines removed: $lines)"
    fi
else
    command -v systemctl >/dev/null ||
        { echo "No /etc/apache2/envvars and no systemctl: give httpd OPENSSL_CONF in its start script (install systemd or see the page)." >&2; exit 1; }
    unit=httpd.service
    [[ -f /usr/lib/systemd/system/apache2.service ]] && unit=apache2.service   # SLES
    mkdir -p "/etc/systemd/system/$unit.d"
    printf '[Service]\nEnvironment=OPENSSL_CONF=%s\n' "$OPENSSL_PKCS11_CONF" > "/etc/systemd/system/$unit.d/openssl-pkcs11.conf"
    systemctl daemon-reload
    echo "wrote /etc/systemd/system/$unit.d/openssl-pkcs11.conf"
fi
echo "restart httpd to use it"
