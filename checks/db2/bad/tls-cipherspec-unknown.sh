#!/usr/bin/env bash
# negates: db2/tls/enable-tls.sh
# checker: db2-clp
# rejects: UPDATE DBM CFG SSL_CIPHERSPECS
# Negative case: a cipher specification Db2 does not know (SHA512 is no TLS 1.2 MAC).
set -euo pipefail
db2 "UPDATE DBM CFG USING SSL_SVR_KEYDB /home/db2inst1/sqllib/security/server.p12 SSL_SVR_STASH /home/db2inst1/sqllib/security/server.sth"
db2 "UPDATE DBM CFG USING SSL_SVCENAME 50001 SSL_CIPHERSPECS TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA512"
db2set DB2COMM=SSL
