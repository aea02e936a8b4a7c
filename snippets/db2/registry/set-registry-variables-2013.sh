#!/usr/bin/env bash
# The study's two registry variables for DB2 9.7, with page cleaning set to ON (the study wrote YES).
# Run as the instance owner, with the instance environment loaded (. ~/sqllib/db2profile).
set -euo pipefail
command -v db2set >/dev/null || { echo "db2set not found: run this as the instance owner after . ~/sqllib/db2profile" >&2; exit 1; }
db2set DB2_USE_ALTERNATE_PAGE_CLEANING=ON
db2set DB2_PINNED_BP=YES
db2set -all | grep -E 'DB2_USE_ALTERNATE_PAGE_CLEANING|DB2_PINNED_BP'
