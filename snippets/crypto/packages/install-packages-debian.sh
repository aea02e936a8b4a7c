#!/usr/bin/env bash
# Install the IBM Z crypto stack on Ubuntu 24.04 or Debian 13: openCryptoki, the openssl command (the
# chapter's pages ask for openssl version), procps (ps and pgrep, which the slot daemon's step uses; a minimal or
# container image lacks it), and on s390x libica's tools and s390-tools (lszcrypt, chzcrypt).
# Run as root. Safe to run twice.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "Run this as root (or with sudo): it installs packages." >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "apt-get not found: this snippet is for Ubuntu/Debian; use the RHEL or SLES tab instead." >&2
  exit 1
fi

packages=(opencryptoki openssl procps)
if [[ $(uname -m) == s390x ]]; then
  # libica-utils pulls in the libica library (libica4 on Ubuntu 24.04, libica3 on Debian 13).
  packages+=(libica-utils s390-tools)
else
  echo "Not IBM Z ($(uname -m)): installing openCryptoki (its soft token) and openssl; libica needs s390x."
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
