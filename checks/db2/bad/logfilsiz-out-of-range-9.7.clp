-- negates: db2/logs/*
-- checker: db2-clp
-- rejects: UPDATE DB CFG LOGFILSIZ 4194304 is outside 4..1048572
-- LOGFILSIZ 4194304 (16 GiB files): valid since 10.5's successors raised the limit, outside 9.7's 4..1048572.
UPDATE DB CFG FOR TRADEDB USING LOGFILSIZ 4194304;
