#!/usr/bin/env bash
# negates: db2/tuning/autoconfigure-tradedb-2013.sh
# checker: db2-clp
# rejects: 'mem_percent 80' continues the command above, but that line does not
# The study's AUTOCONFIGURE as printed, pasted into a shell script: no trailing backslashes.
set -euo pipefail
db2 autoconfigure using
  mem_percent 80
  workload_type simple
  num_stmts 60
  tpm 10000
  is_populated yes
  num_local_apps 0
  num_remote_apps 100
  isolation rs
  bp_resizeable yes
apply db and dbm
