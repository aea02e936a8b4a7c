#!/usr/bin/env bash
# negates: webseal/pdadmin/*.sh
# checker: pdadmin
# rejects: login -a sec_master: -p must come from an environment variable
# test: checks/webseal/test_webseal_config.py::test_pdadmin_validator_rejects_the_study_acl_attach_and_its_literal_password
# The study's ACL commands as printed: literal password, and 'tcp' left between the object and the ACL name.
set -euo pipefail
pd_host=websealserver.pdl.pok.ibm.com
cat <<EOF2 | pdadmin -a sec_master -p lsc2lsc
acl create test-unauthenticated
acl modify test-unauthenticated set Group iv-admin TcmdbsvaBRrxl
acl modify test-unauthenticated set Any-other Trx
EOF2
pdadmin -a sec_master -p lsc2lsc acl attach /WebSEAL/$pd_host-default/ivload/tcp-jct-wasserver-unauth tcp test-unauthenticated
