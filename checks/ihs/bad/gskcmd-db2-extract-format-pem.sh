#!/usr/bin/env bash
# negates: db2/tls/create-server-keystore.sh
# checker: gskit-cmd
# rejects: gskcapicmd -cert -extract: -format is pem, not one of ascii, binary
# Negative case: the Db2 keystore script with -format pem, which gsk8capicmd_64 -cert -extract does not know (ascii is PEM).
# Creates the Db2 instance's TLS keystore: a PKCS #12 file with its password stashed beside it, a server
# certificate in it, and that certificate extracted (PEM) for the clients' truststores. Run as the instance
# owner. Needs KEYSTORE_PASSWORD in the environment; DB2_HOST (the name clients connect to) defaults to this
# host's full name. The certificate is self-signed: for one signed by your CA, see the page.
set -euo pipefail

KEYSTORE="${KEYSTORE:-$HOME/sqllib/security/server.p12}"
LABEL="${LABEL:-db2server}"
DB2_HOST="${DB2_HOST:-$(hostname -f)}"
: "${KEYSTORE_PASSWORD:?set KEYSTORE_PASSWORD to the password for the new keystore}"
GSKIT_BIN="${GSKIT_BIN:-$HOME/sqllib/gskit/bin}"

if [ ! -x "$GSKIT_BIN/gsk8capicmd_64" ]; then
    echo "gsk8capicmd_64 is not in $GSKIT_BIN: run this as the instance owner, or set GSKIT_BIN to Db2's GSKit." >&2
    exit 1
fi
if [ -e "$KEYSTORE" ]; then
    echo "$KEYSTORE exists already: keeping it (remove it first to start again)." >&2
    exit 1
fi

mkdir -p "$(dirname "$KEYSTORE")"
"$GSKIT_BIN/gsk8capicmd_64" -keydb -create -db "$KEYSTORE" -pw "$KEYSTORE_PASSWORD" -type pkcs12 -stash
"$GSKIT_BIN/gsk8capicmd_64" -cert -create -db "$KEYSTORE" -stashed -label "$LABEL" -dn "CN=$DB2_HOST" -san_dnsname "$DB2_HOST" -size 2048 -expire 365 -sigalg SHA256WithRSA
"$GSKIT_BIN/gsk8capicmd_64" -cert -extract -db "$KEYSTORE" -stashed -label "$LABEL" -target "${KEYSTORE%.p12}.pem" -format pem
chmod 600 "$KEYSTORE" "${KEYSTORE%.p12}.sth"
echo "keystore $KEYSTORE, certificate $LABEL for $DB2_HOST; give clients ${KEYSTORE%.p12}.pem"
