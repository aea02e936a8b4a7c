#!/usr/bin/env bash
# negates: webseal/pdadmin/*.sh
# checker: pdadmin
# rejects: acl modify test-unauthenticated: unknown action letters 'z' in 'Trz'
# An ACL entry with a letter that is no action (z) and a group entry without the group's name.
set -euo pipefail
: "${PDADMIN_PASSWORD:?}"
pdadmin_as_sec_master() { { printf 'login -a sec_master -p %s\n' "$PDADMIN_PASSWORD"; cat; } | pdadmin; }
pdadmin_as_sec_master <<PDADMIN
acl modify test-unauthenticated set any-other Trz
acl modify test-unauthenticated set group Tr
PDADMIN
