#!/usr/bin/env bash
# The study's CMS key database with gskcmd (IHS 8.0, GSKit 8), the password from the environment.
# Needs root and KDB_PASSWORD; IHS_ROOT defaults to /opt/IBM/HTTPServer.
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
KDB="${KDB:-$IHS_ROOT/ssl/key.kdb}"
: "${KDB_PASSWORD:?set KDB_PASSWORD to the password for the new key database}"

if [ ! -x "$IHS_ROOT/bin/gskcmd" ]; then
    echo "gskcmd is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi
if [ -f "$KDB" ]; then
    echo "$KDB exists already: keeping it"
    exit 0
fi

mkdir -p "$(dirname "$KDB")"
"$IHS_ROOT/bin/gskcmd" -keydb -create -db "$KDB" -pw "$KDB_PASSWORD" -type cms -expire 999 -stash
ls -l "${KDB%.kdb}".*
