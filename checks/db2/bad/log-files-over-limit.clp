-- 200 primary + 100 secondary log files: each in range, together over the circular-logging limit of 256.
UPDATE DB CFG FOR TRADEDB USING LOGPRIMARY 200 LOGSECOND 100;
