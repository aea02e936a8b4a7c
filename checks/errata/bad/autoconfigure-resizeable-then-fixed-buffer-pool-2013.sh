#!/usr/bin/env bash
# negates: db2/bufferpool/set-buffer-pool-2013.sh
# checker: db2-clp
# rejects: ALTER BUFFERPOOL ibmdefaultbp SIZE 1048576 fixes the size after
# test: checks/errata/test_errata.py::test_static_checker_rejects_the_studys_form
# The 2013 study's two Db2 steps in one script: the Configuration Advisor may resize the buffer pools
# (bp_resizeable yes), then the default buffer pool gets a fixed size, which ends that self-tuning.
set -euo pipefail
db2 -v "connect to tradedb"
db2 -v "autoconfigure using mem_percent 80 workload_type simple num_stmts 60 tpm 10000 is_populated yes num_local_apps 0 num_remote_apps 100 isolation rs bp_resizeable yes apply db and dbm"
db2 -v "alter bufferpool ibmdefaultbp size 1048576"
db2 -v "connect reset"
