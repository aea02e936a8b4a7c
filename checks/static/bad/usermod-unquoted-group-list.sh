#!/usr/bin/env bash
# negates: **/*.sh
# checker: shellcheck
# rejects: [SC2086]
# Unquoted expansion of a user-supplied group list: word splitting and globbing.
set -euo pipefail
groups=$(id -Gn "$1" | tr ' ' ,)
usermod -G $groups,pkcs11 "$1"
