#!/usr/bin/env bash
# negates: **/*.sh
# checker: commands-checked
# rejects: openssl is not on a minimal system and the script calls
# A program called only inside a command substitution in a message still needs its check.
set -euo pipefail
echo "TLS library: $(openssl version)"
