#!/usr/bin/env bash
# Proactive page cleaning for the instance (Db2 11.5 / 12.1); takes effect at the next db2start.
# Run as the instance owner, with the instance environment loaded (. ~/sqllib/db2profile).
set -euo pipefail
command -v db2set >/dev/null || { echo "db2set not found: run this as the instance owner after . ~/sqllib/db2profile" >&2; exit 1; }
db2set DB2_USE_ALTERNATE_PAGE_CLEANING=ON
db2set -all | grep -F DB2_USE_ALTERNATE_PAGE_CLEANING
