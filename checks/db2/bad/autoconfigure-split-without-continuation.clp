-- negates: db2/tuning/autoconfigure-tradedb.clp
-- checker: db2-clp
-- rejects: AUTOCONFIGURE has no APPLY clause (DB ONLY, DB AND DBM or NONE)
-- The study's AUTOCONFIGURE as printed, saved as a CLP file for db2 -vf: no ';' and no trailing '\'.
autoconfigure using
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
