#!/usr/bin/env bash
# Negative case: init-token.sh's old error path, which printed the temporary user PIN (issue 16, finding 18).
set -euo pipefail
die() { echo "$*" >&2; exit 1; }
slot=1 temporary=12345678 out=failed
die "The user PIN is now a temporary one and could not be set back ($out). Set it with" \
  "'pkcsconf -c $slot -p' using the temporary PIN $temporary."
