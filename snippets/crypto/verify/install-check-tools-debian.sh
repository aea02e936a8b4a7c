#!/usr/bin/env bash
# Ubuntu/Debian: the tools the verification steps use besides openCryptoki and libica's: OpenSC's pkcs11-tool
# (hashes through the token), the openssl command, and curl (the servers' checks open TLS connections with it).
# Run as root. Safe to run twice.
set -euo pipefail

[[ $(id -u) -eq 0 ]] || { echo "Run this as root (or with sudo): it installs packages." >&2; exit 1; }
command -v apt-get >/dev/null || { echo "apt-get not found: this snippet is for Ubuntu/Debian." >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends opensc openssl curl
command -v pkcs11-tool >/dev/null && command -v openssl >/dev/null && command -v curl >/dev/null
echo "installed: pkcs11-tool ($(dpkg-query -W -f='${Version}' opensc)), $(openssl version | cut -d' ' -f1-2), $(curl --version | head -n 1 | cut -d' ' -f1-2)"
