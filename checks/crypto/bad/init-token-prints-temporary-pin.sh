#!/usr/bin/env bash
# negates: crypto/token/init-token.sh
# checker: invariant
# test: checks/crypto/test_no_pin_printed.py::test_the_old_error_path_that_printed_the_temporary_pin_is_caught
# Negative case: init-token.sh's old error path, which printed the temporary user PIN (issue 16, finding 18).
set -euo pipefail
die() { echo "$*" >&2; exit 1; }
slot=1 temporary=12345678 out=failed
die "The user PIN is now a temporary one and could not be set back ($out). Set it with" \
  "'pkcsconf -c $slot -p' using the temporary PIN $temporary."
