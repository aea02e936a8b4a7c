#!/usr/bin/env bash
# negates: db2/tls/enable-tls.sh
# checker: tls-as-written
# rejects: SSL_VERSIONS/SSL_CIPHERSPECS: TLS 1.0 is switched on: deprecated
# checker: db2-clp
# rejects: UPDATE DBM CFG SSL_VERSIONS: 'TLSV1' is not one of TLSV12|TLSV13
# Negative case: TLSV1 (TLS 1.0 and 1.1, deprecated by IBM) kept beside TLS 1.2, as many older guides show it.
set -euo pipefail
db2 "UPDATE DBM CFG USING SSL_SVR_KEYDB /home/db2inst1/sqllib/security/server.p12 SSL_SVR_STASH /home/db2inst1/sqllib/security/server.sth"
db2 "UPDATE DBM CFG USING SSL_SVCENAME 50001 SSL_VERSIONS TLSV1,TLSV12"
db2set DB2COMM=SSL
