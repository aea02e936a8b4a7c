#!/usr/bin/env bash
# negates: db2/tls/enable-tls.sh
# checker: db2-clp
# rejects: UPDATE DBM CFG: keyword 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'
# Negative case: a blank after the comma; the CLP then reads the second suite as a keyword of its own.
set -euo pipefail
db2 "UPDATE DBM CFG USING SSL_SVR_KEYDB /home/db2inst1/sqllib/security/server.p12 SSL_SVR_STASH /home/db2inst1/sqllib/security/server.sth"
db2 "UPDATE DBM CFG USING SSL_SVCENAME 50001 SSL_CIPHERSPECS TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
db2set DB2COMM=SSL
