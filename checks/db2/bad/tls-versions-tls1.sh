#!/usr/bin/env bash
# Negative case: TLSV1 (TLS 1.0 and 1.1, deprecated by IBM) kept beside TLS 1.2, as many older guides show it.
set -euo pipefail
db2 "UPDATE DBM CFG USING SSL_SVR_KEYDB /home/db2inst1/sqllib/security/server.p12 SSL_SVR_STASH /home/db2inst1/sqllib/security/server.sth"
db2 "UPDATE DBM CFG USING SSL_SVCENAME 50001 SSL_VERSIONS TLSV1,TLSV12"
db2set DB2COMM=SSL
