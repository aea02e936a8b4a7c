#!/usr/bin/env bash
# negates: db2/tuning/autoconfigure-tradedb-2013.sh
# checker: db2-clp
# rejects: 'mem_percent 80' continues the command above, but that line
# test: checks/db2/test_db2_clp.py::test_validator_rejects_the_studys_autoconfigure_split_without_backslashes_in_a_shell_script
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
