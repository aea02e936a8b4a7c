-- negates: db2/tuning/*
-- checker: db2-clp
-- rejects: AUTOCONFIGURE: unknown keyword 'MEM_PCT'
-- AUTOCONFIGURE has no keyword mem_pct (it is mem_percent).
CONNECT TO TRADEDB;
AUTOCONFIGURE USING mem_pct 80 APPLY DB ONLY;
