#!/usr/bin/env bash
# negates: **/*.sh
# checker: commands-checked
# rejects: sysctl is not on a minimal system and the script calls
# The Db2 kernel page's load step before the lint: sysctl (procps) is not on a minimal system.
set -euo pipefail
conf=${1:?usage: load-ipc-sysctl.sh FILE.conf}
install -D -m 0644 "$conf" "/etc/sysctl.d/$(basename "$conf")"
sysctl -p "/etc/sysctl.d/$(basename "$conf")"
