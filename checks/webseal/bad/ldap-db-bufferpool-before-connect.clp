-- negates: webseal/ldap-db/*
-- checker: ldap-db2-clp
-- rejects: CREATE BUFFERPOOL before CONNECT TO: the CLP has no database
-- test: checks/webseal/test_webseal_config.py::test_ldap_db_validator_rejects_out_of_range_heap_and_buffer_pool_without_connection
-- Buffer pool created with no database connection, with the clause Db2 no longer has.
CREATE DATABASE ldapdb2 USING CODESET UTF-8 TERRITORY US;
CREATE BUFFERPOOL LDAPBP SIZE 1230 PAGESIZE 32K NOT EXTENDED STORAGE;
UPDATE DB CFG FOR ldapdb2 USING APPLHEAPSZ 10 DBHEAP 1200;
