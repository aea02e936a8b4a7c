#!/usr/bin/env bash
# negates: db2/tls/enable-tls.sh
# checker: db2-clp
# rejects: DB2COMM includes SSL, but the script does not set SSL_SVR_KEYDB
# Negative case: DB2COMM asks for SSL, but no keystore, stash or TLS port is configured.
set -euo pipefail
db2 "UPDATE DBM CFG USING SSL_VERSIONS TLSV13,TLSV12"
db2set DB2COMM=SSL,TCPIP
