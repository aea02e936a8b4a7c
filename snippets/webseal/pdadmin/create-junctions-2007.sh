#!/usr/bin/env bash
# The study's junction commands (Table 5), put back together: the PDF table split each one over its cells.
# Needs pdadmin and PDADMIN_PASSWORD; the study typed sec_master's password after -p on the command line.
set -euo pipefail

WEBSEAL_HOST="${WEBSEAL_HOST:-websealserver.pdl.pok.ibm.com}"
WEBSPHERE_HOST="${WEBSPHERE_HOST:-was.example.com}"
: "${PDADMIN_PASSWORD:?set PDADMIN_PASSWORD to the password of sec_master}"

command -v pdadmin >/dev/null || { echo "pdadmin is not installed: install the Access Manager runtime (PDRTE)." >&2; exit 1; }

pdadmin -a sec_master -p "$PDADMIN_PASSWORD" server task "default-webseald-$WEBSEAL_HOST" create -t tcp -p 9080 -h "$WEBSPHERE_HOST" /tcp-jct-wasserver
pdadmin -a sec_master -p "$PDADMIN_PASSWORD" server task "default-webseald-$WEBSEAL_HOST" create -t tcp -p 9080 -h "$WEBSPHERE_HOST" -c all /tcp-jct-wasserver-c-all
pdadmin -a sec_master -p "$PDADMIN_PASSWORD" server task "default-webseald-$WEBSEAL_HOST" create -t ssl -p 9443 -h "$WEBSPHERE_HOST" /ssl-jct-wasserver
