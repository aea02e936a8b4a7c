#!/usr/bin/env bash
# Let the Db2 instance listen on TCP/IP (the port of SVCENAME idsservice in /etc/services) and restart it.
# Run as the instance owner after create-ldap-database.clp; stops and starts the instance.
set -euo pipefail

for cmd in db2set db2stop db2start; do
  command -v "$cmd" >/dev/null || { echo "$cmd is not on PATH: source the instance's sqllib/db2profile first." >&2; exit 1; }
done
grep -qw idsservice /etc/services ||
    { echo "idsservice is not in /etc/services: add 'idsservice 3700/tcp' (your port) as root first." >&2; exit 1; }

db2set DB2COMM=TCPIP
db2stop force || true
db2start
db2set -all
