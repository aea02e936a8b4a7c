#!/usr/bin/env bash
# The study's buffer pool size for DB2 9.7: IBMDEFAULTBP to 1048576 pages of 4 KiB.
# Run as the instance owner, with the instance environment loaded (. ~/sqllib/db2profile).
set -euo pipefail
command -v db2 >/dev/null || { echo "db2 not found: run this as the instance owner after . ~/sqllib/db2profile" >&2; exit 1; }
db2 -v "connect to tradedb"
db2 -v "alter bufferpool ibmdefaultbp size 1048576"
db2 -v "connect reset"
