#!/usr/bin/env bash
# Installs the libraries a Db2 server loads (asynchronous I/O, C++ runtime, PAM) on RHEL 9. Needs root.
# Db2's own db2prereqcheck (in the installation image) checks the rest for the Db2 level you install.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "run this as root: it installs packages" >&2; exit 1; }
command -v dnf >/dev/null || { echo "dnf not found: this snippet is for RHEL" >&2; exit 1; }
dnf install -y libaio libstdc++ pam
