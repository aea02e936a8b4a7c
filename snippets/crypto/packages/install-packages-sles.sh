#!/usr/bin/env bash
# Install the IBM Z crypto stack on SLES 15 (s390x): openCryptoki (with the 64-bit tokens),
# libica 4 and its tools, s390-tools for lszcrypt/chzcrypt. Run as root. Safe to run twice.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "Run this as root (or with sudo): it installs packages." >&2
  exit 1
fi
if ! command -v zypper >/dev/null; then
  echo "zypper not found: this snippet is for SLES; use the RHEL or Ubuntu/Debian tab instead." >&2
  exit 1
fi

zypper --non-interactive install openCryptoki openCryptoki-64bit libica4 libica-tools s390-tools procps
