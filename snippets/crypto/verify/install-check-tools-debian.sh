#!/usr/bin/env bash
# Ubuntu/Debian: the tools the verification steps use besides openCryptoki and libica's: OpenSC's pkcs11-tool
# (hashes through the token) and the openssl command. Run as root. Safe to run twice.
set -euo pipefail

[[ $(id -u) -eq 0 ]] || { echo "Run this as root (or with sudo): it installs packages." >&2; exit 1; }
command -v apt-get >/dev/null || { echo "apt-get not found: this snippet is for Ubuntu/Debian." >&2; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends opensc openssl
command -v pkcs11-tool >/dev/null && command -v openssl >/dev/null
echo "installed: pkcs11-tool ($(dpkg-query -W -f='${Version}' opensc)), $(openssl version | cut -d' ' -f1-2)"
