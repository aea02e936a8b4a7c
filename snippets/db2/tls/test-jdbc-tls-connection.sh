#!/usr/bin/env bash
# Connects to Db2 over TLS with IBM's JDBC driver and its own test tool (com.ibm.db2.jcc.DB2Jcc), using the
# properties of jdbc-tls.properties:
#   JCC_JAR=/opt/ibm/db2/java/db2jcc4.jar DB_USER=db2inst1 TRUSTSTORE_PASSWORD=... \
#     bash test-jdbc-tls-connection.sh HOST:PORT DATABASE [PROPERTIES]
# Prompts for the user's password unless DB_PASSWORD is set. The truststore password reaches the driver in a
# temporary file only this user can read (the driver's global property db2.jcc.sslTrustStorePassword); the user's
# password is on java's command line while the test runs (DB2Jcc takes it there; its output masks it).
# Exit 0: connected.
set -euo pipefail

die() { echo "test-jdbc-tls-connection: $*" >&2; exit 1; }
[ $# -ge 2 ] && [[ $1 == *:* ]] || die "usage: JCC_JAR=... DB_USER=... TRUSTSTORE_PASSWORD=... $0 HOST:PORT DATABASE [PROPERTIES]"
target=$1 database=$2 properties=${3:-$(dirname "$0")/jdbc-tls.properties}
[ -r "${JCC_JAR:-}" ] || die "set JCC_JAR to IBM's JDBC driver (db2jcc4.jar in sqllib/java, or jcc.jar from Maven Central)."
[ -r "$properties" ] || die "cannot read $properties."
: "${DB_USER:?set DB_USER to the Db2 user to connect as}"
: "${TRUSTSTORE_PASSWORD:?set TRUSTSTORE_PASSWORD to the password of the truststore}"
command -v java >/dev/null || die "java is missing: install a Java runtime (openjdk-21-jre-headless, java-21-openjdk-headless)."
if [ -z "${DB_PASSWORD:-}" ]; then
  read -rsp "Password for $DB_USER: " DB_PASSWORD
  echo
fi

# key=value lines (comments and blank lines left out) become the URL's key=value; list.
props=$(sed -e 's/[[:space:]]*#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]*=[[:space:]]*/=/' "$properties" | tr '\n' ';')
secret=$(umask 077 && mktemp)
trap 'rm -f "$secret"' EXIT
printf 'db2.jcc.sslTrustStorePassword=%s\n' "$TRUSTSTORE_PASSWORD" >"$secret"
url="jdbc:db2://$target/$database:${props}${EXTRA_PROPERTIES:-}"
java -Ddb2.jcc.propertiesFile="$secret" -cp "$JCC_JAR" com.ibm.db2.jcc.DB2Jcc -url "$url" -user "$DB_USER" -password "$DB_PASSWORD"
