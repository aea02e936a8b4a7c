#!/usr/bin/env bash
# negates: **/*.sh
# checker: commands-checked
# rejects: the check for curl does not say how to get
# A check that stops but does not say how to get the program.
set -euo pipefail
command -v curl >/dev/null || { echo "curl not found" >&2; exit 1; }
curl -sS https://www.example.com/
