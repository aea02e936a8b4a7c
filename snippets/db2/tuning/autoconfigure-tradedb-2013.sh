#!/usr/bin/env bash
# The study's AUTOCONFIGURE call for DB2 9.7, split over lines the way the shell allows it (trailing '\').
# Run as the instance owner, with the instance environment loaded (. ~/sqllib/db2profile).
set -euo pipefail
command -v db2 >/dev/null || { echo "db2 not found: run this as the instance owner after . ~/sqllib/db2profile" >&2; exit 1; }
db2 -v "connect to tradedb"
db2 -v "autoconfigure using \
  mem_percent 80 \
  workload_type simple \
  num_stmts 60 \
  tpm 10000 \
  is_populated yes \
  num_local_apps 0 \
  num_remote_apps 100 \
  isolation rs \
  bp_resizeable yes \
  apply db and dbm"
db2 -v "connect reset"
