#!/usr/bin/env bash
# negates: webseal/pdadmin/*.sh
# checker: pdadmin
# rejects: acl modify test-unauthenticated: unknown action letters 'z' in 'Trz'
# test: checks/webseal/test_webseal_config.py::test_pdadmin_validator_rejects_unknown_action_letters_and_a_group_entry_without_name
# An ACL entry with a letter that is no action (z) and a group entry without the group's name.
set -euo pipefail
: "${PDADMIN_PASSWORD:?}"
pdadmin_as_sec_master() { { printf 'login -a sec_master -p %s\n' "$PDADMIN_PASSWORD"; cat; } | pdadmin; }
pdadmin_as_sec_master <<PDADMIN
acl modify test-unauthenticated set any-other Trz
acl modify test-unauthenticated set group Tr
PDADMIN
