#!/usr/bin/env bash
# Turns on TLS for the Db2 instance: the keystore, its stash and label from create-server-keystore.sh, TLS on
# port 50001 beside the unencrypted port 50000, TLS 1.3 and 1.2 only (Db2 11.5.8 or later), and forward-secret
# AES-GCM suites. Run as the instance owner; the instance restarts at the end. For TLS connections only, set
# DB2COMM=SSL instead (then the unencrypted port closes).
set -euo pipefail

for cmd in db2 db2set db2stop db2start; do
  command -v "$cmd" >/dev/null || { echo "$cmd is not on PATH: run this as the instance owner (. ~/sqllib/db2profile)." >&2; exit 1; }
done

db2 "UPDATE DBM CFG USING SSL_SVR_KEYDB $HOME/sqllib/security/server.p12 SSL_SVR_STASH $HOME/sqllib/security/server.sth SSL_SVR_LABEL db2server"
db2 "UPDATE DBM CFG USING SVCENAME 50000 SSL_SVCENAME 50001"
db2 "UPDATE DBM CFG USING SSL_VERSIONS TLSV13,TLSV12 SSL_CIPHERSPECS TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
db2set DB2COMM=SSL,TCPIP
db2stop force
db2start
