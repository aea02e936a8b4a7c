#!/usr/bin/env bash
# Create IBM HTTP Server's CMS key database for signer certificates, its password stashed beside it.
# Needs root (or the IHS owner) and KDB_PASSWORD in the environment; IHS_ROOT defaults to /opt/IBM/HTTPServer.
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
KDB="${KDB:-$IHS_ROOT/ssl/key.kdb}"
: "${KDB_PASSWORD:?set KDB_PASSWORD to the password for the new key database}"

if [ ! -x "$IHS_ROOT/bin/gskcapicmd" ]; then
    echo "gskcapicmd is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi
if [ -f "$KDB" ]; then
    echo "$KDB exists already: keeping it"
    exit 0
fi

mkdir -p "$(dirname "$KDB")"
"$IHS_ROOT/bin/gskcapicmd" -keydb -create -db "$KDB" -pw "$KDB_PASSWORD" -type cms -stash
chmod 600 "${KDB%.kdb}.kdb" "${KDB%.kdb}.rdb" "${KDB%.kdb}.sth"
ls -l "${KDB%.kdb}".*
