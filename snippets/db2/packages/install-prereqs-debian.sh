#!/usr/bin/env bash
# Installs the libraries a Db2 server loads (asynchronous I/O, C++ runtime, PAM) on Ubuntu or Debian. Needs root.
# Ubuntu 24.04 and Debian 13 ship libaio as libaio1t64 (file libaio.so.1t64): a libaio.so.1 link is added for Db2.
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "run this as root: it installs packages" >&2; exit 1; }
command -v apt-get >/dev/null || { echo "apt-get not found: this snippet is for Ubuntu and Debian" >&2; exit 1; }
libaio=libaio1
if apt-cache show libaio1t64 >/dev/null 2>&1; then libaio=libaio1t64; fi
DEBIAN_FRONTEND=noninteractive apt-get install -y "$libaio" libstdc++6 libpam0g
t64=$(dpkg -L "$libaio" | grep -E '/libaio\.so\.1t64$' | head -n 1 || true)
if [ -n "$t64" ] && [ ! -e "${t64%t64}" ]; then
  ln -s libaio.so.1t64 "${t64%t64}"
fi
