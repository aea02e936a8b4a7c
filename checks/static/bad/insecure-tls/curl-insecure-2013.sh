#!/usr/bin/env bash
# negates: **/*.sh
# checker: insecure-tls
# rejects: curl -k accepts any certificate: verify against the CA instead
# test: checks/static/test_insecure_tls.py::test_insecure_tls_lint_rejects
# The 2013 study's sniff test of the WebSphere HTTPS port, as printed (less the root prompt).
set -euo pipefail
curl -k -v https://wasnode1.net:9443/daytrader
