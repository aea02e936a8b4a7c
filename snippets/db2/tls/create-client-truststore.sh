#!/usr/bin/env bash
# Puts the Db2 server's certificate (or the CA that signed it) into a PKCS #12 truststore for Java clients:
#   TRUSTSTORE_PASSWORD=... bash create-client-truststore.sh server.pem [TRUSTSTORE]
# TRUSTSTORE defaults to /etc/pki/db2/truststore.p12. Needs keytool (a Java runtime).
set -euo pipefail

die() { echo "create-client-truststore: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: TRUSTSTORE_PASSWORD=... $0 CERTIFICATE.pem [TRUSTSTORE]"
cert=$1 store=${2:-/etc/pki/db2/truststore.p12}
[ -r "$cert" ] || die "cannot read $cert: copy the server's certificate (server.pem) or your CA's here."
: "${TRUSTSTORE_PASSWORD:?set TRUSTSTORE_PASSWORD to the password of the truststore}"
command -v keytool >/dev/null || die "keytool is missing: install a Java runtime (openjdk-21-jre-headless, java-21-openjdk-headless)."
[ ! -e "$store" ] || die "$store exists already: remove it first, or import into it with keytool -importcert."

mkdir -p "$(dirname "$store")"
keytool -importcert -noprompt -alias db2server -file "$cert" -keystore "$store" -storetype PKCS12 \
  -storepass:env TRUSTSTORE_PASSWORD
chmod 644 "$store"
keytool -list -keystore "$store" -storetype PKCS12 -storepass:env TRUSTSTORE_PASSWORD | grep -i trustedCertEntry
