-- negates: db2/logs/*
-- checker: db2-clp
-- rejects: database TRADEDB: LOGPRIMARY 200 + LOGSECOND 100 = 300 exceeds 256
-- 200 primary + 100 secondary log files: each in range, together over the circular-logging limit of 256.
UPDATE DB CFG FOR TRADEDB USING LOGPRIMARY 200 LOGSECOND 100;
