#!/usr/bin/env bash
# negates: db2/registry/*
# checker: db2-clp
# rejects: db2set DB2_USE_ALTERNATE_PAGE_CLEANING='YES': allowed ON|OFF
# test: checks/db2/test_db2_clp.py::test_validator_rejects_the_studys_yes_for_page_cleaning
# The study's db2set line: YES where the documentation lists ON and OFF.
set -euo pipefail
db2set DB2_USE_ALTERNATE_PAGE_CLEANING=YES
