-- Fixed-size circular log for TRADEDB: 6 primary files of 262144 pages (4 KiB) each, no secondary files.
-- Run as the instance owner: db2 -tvf set-log-params.clp (new sizes apply at the next database activation).
UPDATE DB CFG FOR TRADEDB USING
  LOGFILSIZ 262144
  LOGPRIMARY 6
  LOGSECOND 0;
