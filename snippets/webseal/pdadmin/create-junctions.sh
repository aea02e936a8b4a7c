#!/usr/bin/env bash
# Create the study's three junctions on a WebSEAL instance: TCP, TCP with identity headers (-c all), SSL.
# Needs pdadmin and PDADMIN_PASSWORD (sec_master's password) in the environment; -f replaces an existing junction.
set -euo pipefail

WEBSEAL_SERVER="${WEBSEAL_SERVER:-default-webseald-webseal.example.com}"
BACKEND_HOST="${BACKEND_HOST:-was.example.com}"
: "${PDADMIN_PASSWORD:?set PDADMIN_PASSWORD to the password of sec_master}"

command -v pdadmin >/dev/null || { echo "pdadmin is not installed: install the Access Manager runtime (PDRTE)." >&2; exit 1; }

# The password goes to pdadmin on its standard input (printf is a shell builtin), never on a command line.
pdadmin_as_sec_master() { { printf 'login -a sec_master -p %s\n' "$PDADMIN_PASSWORD"; cat; } | pdadmin; }

pdadmin_as_sec_master <<PDADMIN
server task $WEBSEAL_SERVER create -t tcp -h $BACKEND_HOST -p 9080 -f /tcp-jct
server task $WEBSEAL_SERVER create -t tcp -h $BACKEND_HOST -p 9080 -c all -f /tcp-jct-c-all
server task $WEBSEAL_SERVER create -t ssl -h $BACKEND_HOST -p 9443 -f /ssl-jct
server task $WEBSEAL_SERVER list
PDADMIN
