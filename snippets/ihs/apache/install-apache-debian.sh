#!/usr/bin/env bash
# Ubuntu/Debian: install Apache httpd with mod_ssl (part of the apache2 package) and the openssl command the
# pages use. Run as root.
set -euo pipefail

[[ $EUID -eq 0 ]] || { echo "Run this as root." >&2; exit 1; }
command -v apt-get >/dev/null || { echo "No apt-get: this step is for Ubuntu and Debian." >&2; exit 1; }
apt-get install -y --no-install-recommends apache2 openssl
command -v apache2 >/dev/null || { echo "apache2 is still missing: install the apache2 package." >&2; exit 1; }
apache2 -v | head -n 1
