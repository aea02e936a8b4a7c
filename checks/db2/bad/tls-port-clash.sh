#!/usr/bin/env bash
# negates: db2/tls/enable-tls.sh
# checker: db2-clp
# rejects: SSL_SVCENAME 50000 is SVCENAME's port too: the TLS
# Negative case: the TLS port is the unencrypted port too.
set -euo pipefail
db2 "UPDATE DBM CFG USING SSL_SVR_KEYDB /home/db2inst1/sqllib/security/server.p12 SSL_SVR_STASH /home/db2inst1/sqllib/security/server.sth"
db2 "UPDATE DBM CFG USING SVCENAME 50000 SSL_SVCENAME 50000"
db2set DB2COMM=SSL,TCPIP
