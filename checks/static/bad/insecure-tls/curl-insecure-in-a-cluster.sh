#!/usr/bin/env bash
# The same mistake hidden in a cluster of short options and a command substitution.
set -euo pipefail
out=$(curl -sSk -o /dev/null -w '%{http_code}' "https://${TARGET:?set TARGET}/")
echo "$out"
