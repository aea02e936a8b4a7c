#!/usr/bin/env bash
# Stash the token's user PIN in a file that SSLStashfile names, so IHS opens the token unattended.
# Needs root and TOKEN_USER_PIN in the environment; the stash file is readable by root only.
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
STASH="${STASH:-$IHS_ROOT/ssl/ibmicatok.sth}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of the token}"

if [ ! -x "$IHS_ROOT/bin/sslstash" ]; then
    echo "sslstash is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi

mkdir -p "$(dirname "$STASH")"
"$IHS_ROOT/bin/sslstash" -c "$STASH" crypto "$TOKEN_USER_PIN"
chmod 600 "$STASH"
ls -l "$STASH"
