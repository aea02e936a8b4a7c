#!/usr/bin/env bash
# Installs the logind drop-in that keeps a user's IPC objects when the user's last session ends (RemoveIPC=no),
# checks that no later file sets RemoveIPC again, and restarts systemd-logind so that it applies now. Needs root.
# Usage: keep-ipc-at-logout.sh 90-db2-keep-ipc.conf   (LOGIND_DIR overrides /etc/systemd/logind.conf.d)
set -euo pipefail
die() { echo "keep-ipc-at-logout: $*" >&2; exit 1; }
conf=${1:?usage: keep-ipc-at-logout.sh 90-db2-keep-ipc.conf}
dir=${LOGIND_DIR:-/etc/systemd/logind.conf.d}
[[ -r $conf ]] || die "cannot read $conf: give the path of the drop-in to install."
((EUID == 0)) || die "run this as root: logind's configuration belongs to root."
for tool in systemd-analyze systemctl; do
  command -v "$tool" >/dev/null || die "$tool is missing: install systemd (this step is for a system that runs it)."
done
install -D -m 0644 "$conf" "$dir/$(basename "$conf")"

# The value logind will use: the last RemoveIPC= in a [Login] section, in the order logind reads its files.
effective=$(systemd-analyze cat-config systemd/logind.conf 2>/dev/null |
  awk '/^[[:space:]]*\[/ { login = ($0 ~ /^[[:space:]]*\[Login\]/) }
       login && /^[[:space:]]*RemoveIPC[[:space:]]*=/ { v = $0; sub(/^[^=]*=[[:space:]]*/, "", v); sub(/[[:space:]]+$/, "", v) }
       END { print v }')
[[ $effective == no ]] ||
  die "RemoveIPC is '${effective:-yes (the default)}' after all of logind's files: a file read after $dir/$(basename "$conf") sets it again (systemd-analyze cat-config systemd/logind.conf shows which)."

if systemctl is-active --quiet systemd-logind 2>/dev/null; then
  systemctl restart systemd-logind
  command -v busctl >/dev/null || die "busctl is missing: install systemd to ask logind for its setting."
  now=$(busctl get-property org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager RemoveIPC)
  [[ $now == "b false" ]] || die "systemd-logind still reports RemoveIPC as '$now' after its restart."
  echo "systemd-logind keeps every user's IPC objects at logout (RemoveIPC=no, in effect now)."
else
  echo "RemoveIPC=no is in $dir; systemd-logind is not running here and reads it when it starts."
fi
