-- Fixed size for TRADEDB's default buffer pool: 1048576 pages of 4 KiB (the database's page size).
-- Run as the instance owner: db2 -tvf set-buffer-pool.clp
CONNECT TO TRADEDB;
ALTER BUFFERPOOL IBMDEFAULTBP IMMEDIATE SIZE 1048576;
CONNECT RESET;
