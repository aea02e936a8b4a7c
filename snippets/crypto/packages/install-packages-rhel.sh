#!/usr/bin/env bash
# Install the IBM Z crypto stack on RHEL 9 (s390x): openCryptoki with the ICA token, libica and
# its tools, s390utils for lszcrypt/chzcrypt. Run as root. Safe to run twice.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "Run this as root (or with sudo): it installs packages." >&2
  exit 1
fi
if ! command -v dnf >/dev/null; then
  echo "dnf not found: this snippet is for RHEL; use the SLES or Ubuntu/Debian tab instead." >&2
  exit 1
fi

dnf install -y opencryptoki opencryptoki-icatok libica s390utils-base procps-ng
