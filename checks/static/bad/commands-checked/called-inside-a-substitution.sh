#!/usr/bin/env bash
# A program called only inside a command substitution in a message still needs its check.
set -euo pipefail
echo "TLS library: $(openssl version)"
