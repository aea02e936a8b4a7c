#!/usr/bin/env bash
# Installs a Db2 IPC sysctl file into /etc/sysctl.d and loads it now (it is loaded again at every boot).
# Needs root. Usage: load-ipc-sysctl.sh 90-db2-ipc.conf   (SYSCTL_DIR overrides /etc/sysctl.d)
set -euo pipefail
conf=${1:?usage: load-ipc-sysctl.sh FILE.conf}
dir=${SYSCTL_DIR:-/etc/sysctl.d}
command -v sysctl >/dev/null || { echo "sysctl is missing: install procps (the package that has sysctl)" >&2; exit 1; }
[ -r "$conf" ] || { echo "cannot read $conf: give the path of the sysctl file to install" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "run this as root: changing kernel parameters needs it" >&2; exit 1; }
target="$dir/$(basename "$conf")"
install -D -m 0644 "$conf" "$target"
sysctl -p "$target"
