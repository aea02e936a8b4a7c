#!/usr/bin/env bash
# Add the certificate of the CA that signed the application server's certificate to the plug-in's key database as a
# signer, so that the plug-in can validate WebSphere (or Liberty) when it connects. Run on the IHS host as root or the
# IHS owner; SIGNER_FILE is that CA's certificate (PEM). The key database's password comes from its stash file.
# ONLY for an unmanaged web server that WebSphere never propagates to: a propagation from the cell writes the cell's
# plugin-key.kdb over this one and the signer is gone. Elsewhere add it in the cell (add-signer-to-plugin-keystore.py).
set -euo pipefail

IHS_ROOT="${IHS_ROOT:-/opt/IBM/HTTPServer}"
KDB="${KDB:-/opt/IBM/WebSphere/Plugins/config/webserver1/plugin-key.kdb}"
SIGNER_LABEL="${SIGNER_LABEL:-was-ca}"
: "${SIGNER_FILE:?set SIGNER_FILE to the PEM certificate of the CA that signed the application server certificate}"

if [ ! -x "$IHS_ROOT/bin/gskcapicmd" ]; then
    echo "gskcapicmd is not in $IHS_ROOT/bin: set IHS_ROOT to the IBM HTTP Server installation" >&2
    exit 1
fi
if [ ! -f "$KDB" ] || [ ! -f "${KDB%.kdb}.sth" ]; then
    echo "$KDB or its stash file ${KDB%.kdb}.sth is missing: copy the plug-in key database from WebSphere first" >&2
    exit 1
fi
if [ ! -r "$SIGNER_FILE" ]; then
    echo "cannot read $SIGNER_FILE" >&2
    exit 1
fi

if "$IHS_ROOT/bin/gskcapicmd" -cert -details -db "$KDB" -stashed -label "$SIGNER_LABEL" > /dev/null 2>&1; then
    echo "$KDB already holds a certificate labelled $SIGNER_LABEL: keeping it"
else
    "$IHS_ROOT/bin/gskcapicmd" -cert -add -db "$KDB" -stashed -label "$SIGNER_LABEL" -file "$SIGNER_FILE" -format ascii
fi
"$IHS_ROOT/bin/gskcapicmd" -cert -list -db "$KDB" -stashed
