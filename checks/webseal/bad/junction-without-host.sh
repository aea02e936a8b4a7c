#!/usr/bin/env bash
# negates: webseal/pdadmin/*.sh
# checker: pdadmin
# rejects: server task default-webseald-websealserver: -h (back-end host)
# test: checks/webseal/test_webseal_config.py::test_pdadmin_validator_rejects_a_junction_without_its_host
# A TCP junction whose -h (back-end host) was lost, as in the study's Table 5 where the cells split it.
set -euo pipefail
: "${PDADMIN_PASSWORD:?}"
pdadmin -a sec_master -p "$PDADMIN_PASSWORD" server task default-webseald-websealserver create -t tcp -p 9080 /tcp-jct
