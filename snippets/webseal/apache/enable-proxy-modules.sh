#!/usr/bin/env bash
# Enable the Apache modules the junction site needs: ssl, proxy, proxy_http, headers.
# Run as root. Debian/Ubuntu/SLES: a2enmod; RHEL loads them by default (checked with httpd -M).
set -euo pipefail

modules=(ssl proxy proxy_http headers)
[[ $EUID -eq 0 ]] || { echo "Run this as root." >&2; exit 1; }

if command -v a2enmod >/dev/null; then
    a2enmod -q "${modules[@]}"
    echo "enabled: ${modules[*]} (restart httpd to load them)"
elif command -v httpd >/dev/null; then
    loaded=$(httpd -M 2>/dev/null)
    for m in "${modules[@]}"; do
        grep -q "^ *${m}_module" <<<"$loaded" ||
            { echo "${m}_module is not loaded: install mod_ssl (RHEL) or add its LoadModule line." >&2; exit 1; }
    done
    echo "loaded already: ${modules[*]}"
else
    echo "Neither a2enmod nor httpd was found: install Apache httpd first." >&2
    exit 1
fi
