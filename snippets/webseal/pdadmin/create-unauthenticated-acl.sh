#!/usr/bin/env bash
# Create the ACL that lets unauthenticated users read the test page, and attach it to the page's object.
# Needs pdadmin and PDADMIN_PASSWORD (sec_master's password); WEBSEAL_HOST is the host in the object space.
set -euo pipefail

WEBSEAL_HOST="${WEBSEAL_HOST:-webseal.example.com}"
TEST_OBJECT="${TEST_OBJECT:-/WebSEAL/$WEBSEAL_HOST-default/tcp-jct/index.html}"
: "${PDADMIN_PASSWORD:?set PDADMIN_PASSWORD to the password of sec_master}"

command -v pdadmin >/dev/null || { echo "pdadmin is not installed: install the Access Manager runtime (PDRTE)." >&2; exit 1; }

pdadmin_as_sec_master() { { printf 'login -a sec_master -p %s\n' "$PDADMIN_PASSWORD"; cat; } | pdadmin; }

# 'acl create' fails when the ACL exists; the modify and attach lines after it are safe to repeat.
pdadmin_as_sec_master <<PDADMIN || true
acl create test-unauthenticated
PDADMIN
pdadmin_as_sec_master <<PDADMIN
acl modify test-unauthenticated set group iv-admin TcmdbsvaBRrxl
acl modify test-unauthenticated set group webseal-servers Tgmdbsrxl
acl modify test-unauthenticated set user sec_master TcmdbsvaBRrxl
acl modify test-unauthenticated set any-other Trx
acl modify test-unauthenticated set unauthenticated Tr
acl attach $TEST_OBJECT test-unauthenticated
acl show test-unauthenticated
PDADMIN
