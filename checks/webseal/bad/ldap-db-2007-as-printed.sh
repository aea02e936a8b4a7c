#!/usr/bin/env bash
# negates: webseal/ldap-db/create-ldap-database-2007.sh
# checker: ldap-db2-clp
# rejects: CREATE BUFFERPOOL before CONNECT TO: the CLP has no database
# test: checks/webseal/test_webseal_config.py::test_ldap_db_validator_rejects_the_study_commands_as_printed
# The study's commands as printed: no CONNECT TO, removed EXTENDED STORAGE clause, unclosed quote.
set -euo pipefail
db2 create db ldapdb2 using codeset UTF-8 territory US
db2 CREATE BUFFERPOOL LDAPBP SIZE 1230 PAGESIZE 32K NOT EXTENDED STORAGE
db2 ALTER BUFFERPOOL IBMDEFAULTBP SIZE 29500
db2 "CREATE TABLESPACE LDAPSPACE PAGESIZE 32K MANAGED BY SYSTEM
db2 update dbm cfg using svcename idsservice
