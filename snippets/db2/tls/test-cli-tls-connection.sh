#!/usr/bin/env bash
# Connects to Db2 over TLS with IBM's CLI driver and its own test, db2cli validate -connect: a data source of
# db2dsdriver.cfg (set DB2DSDRIVER_CFG_PATH if the file is not where the driver looks), or a connection string:
#   DB_USER=db2inst1 bash test-cli-tls-connection.sh TRADETLS
#   DB_USER=db2inst1 bash test-cli-tls-connection.sh "$(cat cli-tls-connection-string.txt)"
# Prompts for the user's password unless DB_PASSWORD is set; db2cli takes it on its command line while it runs.
# Exit 0: connected. db2cli itself exits 0 when the connection fails, so this script reads its verdict.
set -euo pipefail

die() { echo "test-cli-tls-connection: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: DB_USER=... $0 DSN-ALIAS | 'DATABASE=...;HOSTNAME=...;PORT=...;SECURITY=SSL;...'"
command -v db2cli >/dev/null || die "db2cli is not on PATH: put the CLI driver's bin on PATH and its lib on LD_LIBRARY_PATH (IBM Data Server Driver for ODBC and CLI), or source ~/sqllib/db2profile."
: "${DB_USER:?set DB_USER to the Db2 user to connect as}"
if [ -z "${DB_PASSWORD:-}" ]; then
  read -rsp "Password for $DB_USER: " DB_PASSWORD
  echo
fi

if [[ $1 == *=* ]]; then
  [[ ${1^^} == *SECURITY=SSL* ]] || die "the connection string has no SECURITY=SSL: the connection would go in clear."
  target=(-connstring "$1")
else
  target=(-dsn "$1")
fi

rc=0
out=$(db2cli validate "${target[@]}" -connect -user "$DB_USER" -passwd "$DB_PASSWORD") || rc=$?
# what db2cli read for the data source (a connection string has no such table), then its verdict
printf '%s\n' "$out" | sed -n '/^\[ Parameters used/,/^====/p' | grep -v -e '^$' -e '^====' || true
printf '%s\n' "$out" | grep -E '^\[(FAILED|SUCCESS)\]|^Failure|^ +(Error at|Message) :' || true

if [[ $out == *"**UNKNOWN**"* ]]; then
  die "db2cli does not know a keyword above (marked **UNKNOWN**): correct it; a misspelt SecurityTransportMode leaves the connection in clear."
elif [ "$rc" -ne 0 ]; then
  die "db2cli could not read its configuration (exit status $rc): run db2cli validate -dsn $1 and correct what it reports."
elif grep -q '^\[SUCCESS\]' <<<"$out"; then
  echo "connected over TLS"
elif [[ $out == *SQL20576N* ]]; then
  die "the server's certificate does not name the host you connect to (SSLClientHostnameValidation=Basic): connect by a name it holds."
elif [[ $out == *sqlccSSLSocketSetup* ]]; then
  die "the TLS handshake failed: SSLServerCertificate must be the server's certificate or its CA's, and TLSVersion a version in the server's SSL_VERSIONS."
else
  die "the connection failed (the message above says why)."
fi
