-- Configuration Advisor for TRADEDB, the only database of the instance, with the study's workload figures.
-- Run as the instance owner: db2 -tvf autoconfigure-tradedb.clp (the ';' ends each statement, so it may span lines).
CONNECT TO TRADEDB;
AUTOCONFIGURE USING
  mem_percent 80
  workload_type simple
  num_stmts 60
  tpm 10000
  is_populated yes
  num_local_apps 0
  num_remote_apps 100
  isolation RS
  bp_resizeable yes
  APPLY DB AND DBM;
CONNECT RESET;
