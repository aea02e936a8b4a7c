#!/usr/bin/env bash
# The 2007 study's commands for the directory server's database (DB2 8.2), corrected so that they run.
# Run as the instance owner; LDAP_SPACE_DIR is the directory of the SMS table space's container.
set -euo pipefail

LDAP_SPACE_DIR="${LDAP_SPACE_DIR:-$HOME/ldapspace}"
for cmd in db2 db2set; do
  command -v "$cmd" >/dev/null || { echo "$cmd is not on PATH: source the instance's sqllib/db2profile first." >&2; exit 1; }
done

db2 "CREATE DATABASE ldapdb2 USING CODESET UTF-8 TERRITORY US"
db2 "CONNECT TO ldapdb2"
db2 "CREATE BUFFERPOOL LDAPBP SIZE 1230 PAGESIZE 32K"
db2 "ALTER BUFFERPOOL IBMDEFAULTBP SIZE 29500"
db2 "CREATE TABLESPACE LDAPSPACE PAGESIZE 32K MANAGED BY SYSTEM USING ('$LDAP_SPACE_DIR') BUFFERPOOL LDAPBP"
db2 "UPDATE DB CFG FOR ldapdb2 USING APPLHEAPSZ 1024"
db2 "UPDATE DB CFG FOR ldapdb2 USING DBHEAP 1200"
db2 "CONNECT RESET"
db2 "UPDATE DBM CFG USING SVCENAME idsservice"
db2set DB2COMM=TCPIP
