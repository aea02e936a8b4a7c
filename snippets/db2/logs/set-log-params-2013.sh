#!/usr/bin/env bash
# The study's log setup for DB2 9.7 (one db2 call per parameter), with a check that the CLP is there.
# Run as the instance owner, with the instance environment loaded (. ~/sqllib/db2profile).
set -euo pipefail
command -v db2 >/dev/null || { echo "db2 not found: run this as the instance owner after . ~/sqllib/db2profile" >&2; exit 1; }
db2 -v "update db cfg for tradedb using LOGPRIMARY 6"
db2 -v "update db cfg for tradedb using LOGSECOND 0"
db2 -v "update db cfg for tradedb using LOGFILSIZ 262144"
