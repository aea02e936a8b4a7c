-- negates: webseal/ldap-db/*
-- checker: ldap-db2-clp
-- rejects: CREATE TABLESPACE MANAGED BY SYSTEM names no containers
-- test: checks/webseal/test_webseal_config.py::test_ldap_db_validator_rejects_a_32k_table_space_without_a_32k_buffer_pool
-- The study's table space with the quote closed: 32 KB pages but no 32 KB buffer pool named, no container.
CREATE DATABASE ldapdb2 USING CODESET UTF-8 TERRITORY US;
CONNECT TO ldapdb2;
CREATE BUFFERPOOL LDAPBP SIZE 1230 PAGESIZE 32K;
CREATE TABLESPACE LDAPSPACE PAGESIZE 32K MANAGED BY SYSTEM;
CONNECT RESET;
