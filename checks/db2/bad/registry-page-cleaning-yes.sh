#!/usr/bin/env bash
# negates: db2/registry/*
# checker: db2-clp
# rejects: db2set DB2_USE_ALTERNATE_PAGE_CLEANING='YES': allowed ON|OFF
# The study's db2set line: YES where the documentation lists ON and OFF.
set -euo pipefail
db2set DB2_USE_ALTERNATE_PAGE_CLEANING=YES
