#!/usr/bin/env bash
# negates: **/*.sh
# checker: insecure-tls
# rejects: curl -sSk accepts any certificate: verify against the CA instead
# The same mistake hidden in a cluster of short options and a command substitution.
set -euo pipefail
out=$(curl -sSk -o /dev/null -w '%{http_code}' "https://${TARGET:?set TARGET}/")
echo "$out"
