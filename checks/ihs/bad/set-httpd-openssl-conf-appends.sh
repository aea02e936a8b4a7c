#!/usr/bin/env bash
# negates: ihs/apache/set-httpd-openssl-conf.sh
# checker: testinfra
# rejects: sets OPENSSL_CONF already
# test: checks/ihs/test_httpd_openssl_conf_step.py::test_the_old_step_keeps_the_fips_line_when_asked_to_switch_back
# NEGATIVE CASE (checks/ihs/test_httpd_openssl_conf_step.py): the step before 2026-12 (source review L-14). It
# appended a second line for the FIPS file, and switching back found the first line and said "already" while
# the later FIPS line stayed in force.
# Make httpd (only httpd) start with OPENSSL_CONF pointing at the pkcs11-provider configuration.
# Run as root. Debian/Ubuntu: a line in /etc/apache2/envvars; RHEL/SLES: a systemd drop-in for the unit.
set -euo pipefail

OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
line="export OPENSSL_CONF=$OPENSSL_PKCS11_CONF"

[[ $EUID -eq 0 ]] || { echo "Run this as root." >&2; exit 1; }
[[ -f "$OPENSSL_PKCS11_CONF" ]] || { echo "$OPENSSL_PKCS11_CONF does not exist: install it first." >&2; exit 1; }

if [[ -f /etc/apache2/envvars ]]; then
    if grep -qxF "$line" /etc/apache2/envvars; then
        echo "/etc/apache2/envvars sets OPENSSL_CONF already"
    else
        echo "$line" >> /etc/apache2/envvars
        echo "added to /etc/apache2/envvars: $line"
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
