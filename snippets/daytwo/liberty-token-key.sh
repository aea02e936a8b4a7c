#!/usr/bin/env bash
# Renew the key of a Liberty server whose keystore is the openCryptoki token (the Liberty page's server.xml), in two
# steps. The new key pair is already in the token under NEW_ALIAS with the CA's certificate installed on it
# (generate-token-key.sh, keytool -certreq, keytool -importcert).
#   switch SERVER NEW_ALIAS: Liberty reads a PKCS #11 keystore once, when it starts, so this stops the server,
#     names the new alias in server.xml (serverKeyAlias; a copy of the file stays beside it) and starts it again with
#     the Liberty page's start-server.sh: the HTTPS port is closed for those seconds. Editing server.xml while the
#     server runs leaves the port without a key until a restart (the page shows it).
#   remove-old SERVER OLD_ALIAS: removes the old key pair and its certificate from the token; refuses while
#     server.xml names no other alias or still names this one, and while the server presents its certificate.
# Run as the user the server runs as (a member of pkcs11), with the token's user PIN in TOKEN_USER_PIN:
#   TOKEN_USER_PIN=... bash liberty-token-key.sh switch|remove-old SERVER ALIAS
# Environment: WLP_DIR (/opt/ibm/wlp), WLP_USER_DIR, WLP_OUTPUT_DIR (as Liberty reads them), TOKEN_CONFIG
# (/etc/websphere/pkcs11-ica-token.cfg), PROVIDERS_FILE (/etc/websphere/liberty-pkcs11.security), KEYTOOL (the
# server Java's keytool; default keytool on PATH), START_SERVER (the Liberty page's start-server.sh; default: beside
# this folder, ../was/liberty/start-server.sh), PORT (9443).
set -euo pipefail

die() { echo "liberty-token-key: $*" >&2; exit 1; }
[[ $# -eq 3 && ( $1 == switch || $1 == remove-old ) ]] ||
  { echo "usage: TOKEN_USER_PIN=... $0 switch|remove-old SERVER ALIAS" >&2; exit 2; }
action=$1 server=$2 alias=$3
[[ "$alias" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "The alias '$alias' has characters server.xml would need escaped: use" \
  "letters, digits, '.', '_' and '-'." >&2; exit 2; }
wlp=${WLP_DIR:-/opt/ibm/wlp}
xml="${WLP_USER_DIR:-$wlp/usr}/servers/$server/server.xml"
config=${TOKEN_CONFIG:-/etc/websphere/pkcs11-ica-token.cfg}
providers=${PROVIDERS_FILE:-/etc/websphere/liberty-pkcs11.security}
keytool=${KEYTOOL:-keytool}
port=${PORT:-9443}

[[ -n ${TOKEN_USER_PIN:-} ]] || die "set TOKEN_USER_PIN to the token's user PIN (read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN)."
[[ -x "$wlp/bin/server" ]] || die "no Liberty in $wlp: set WLP_DIR to its install folder."
[[ -w "$xml" ]] || die "cannot write $xml as $(id -un): give the server's name, and run as the user the server runs as."
grep -q '<ssl id="defaultSSLConfig"' "$xml" || die "$xml has no <ssl id=\"defaultSSLConfig\" element on one line (the Liberty page's form)."
command -v "$keytool" >/dev/null || die "no keytool at $keytool: set KEYTOOL to the keytool of the server's Java."
command -v openssl >/dev/null || die "openssl is missing: install openssl."
[[ -r $config ]] || die "cannot read the token configuration $config: set TOKEN_CONFIG."
name=$(sed -n 's/^name *= *\([^ ]*\).*/\1/p' "$config" | head -n 1)
[[ -n $name ]] || die "$config has no 'name = ...' line, so the provider's name is unknown."
store=(-keystore NONE -storetype PKCS11 -providerName "SunPKCS11-$name" "-J-Djava.security.properties=$providers"
       -storepass:env TOKEN_USER_PIN)
served() { openssl s_client -connect "localhost:$port" </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256 || true; }

if [[ $action == remove-old ]]; then
  named=$(sed -n 's/.*<ssl id="defaultSSLConfig"[^>]*serverKeyAlias="\([^"]*\)".*/\1/p' "$xml" | head -n 1)
  [[ -n $named ]] || die "$xml names no serverKeyAlias, so the server may still use '$alias': switch first."
  [[ $named != "$alias" ]] || die "$xml still names '$alias' (serverKeyAlias): the key stays."
  old_fp=$("$keytool" -exportcert -rfc "${store[@]}" -alias "$alias" 2>/dev/null | openssl x509 -noout -fingerprint -sha256) ||
    die "the token has no entry '$alias' (or keytool could not log in): nothing removed."
  now=$(served)
  [[ -n $now ]] || die "nothing answers TLS on localhost:$port, so which key serves is unknown: the key stays."
  [[ $now != "$old_fp" ]] || die "the server on port $port still presents '$alias': restart it with the new alias first; the key stays."
  "$keytool" -delete "${store[@]}" -alias "$alias"
  echo "removed '$alias' from the token; the server presents '$named'"
  exit 0
fi

start=${START_SERVER:-$(dirname "$0")/../was/liberty/start-server.sh}
[[ -r "$start" ]] || die "cannot read the Liberty page's start-server.sh at $start: set START_SERVER."
# 1. Before the server is touched: the alias is a key entry in the token, and it carries the CA's certificate,
# not the self-signed one keytool made with the key.
entry=$("$keytool" -list -v "${store[@]}" -alias "$alias" 2>&1) ||
  die "the token has no entry '$alias' (or keytool could not log in): generate the key first. The server was not touched."
grep -q 'Entry type: PrivateKeyEntry' <<<"$entry" || die "'$alias' in the token is not a key pair. The server was not touched."
length=$(sed -n 's/^Certificate chain length: *//p' <<<"$entry")
[[ ${length:-1} -ge 2 ]] || die "'$alias' still carries its self-signed certificate: import the CA's reply" \
  "(keytool -importcert -alias $alias) first. The server was not touched."
want=$("$keytool" -exportcert -rfc "${store[@]}" -alias "$alias" 2>/dev/null | openssl x509 -noout -fingerprint -sha256)

# 2. Stop, name the new alias, start.
"$wlp/bin/server" stop "$server" >/dev/null || true
cp -p "$xml" "$xml.before-$alias"
if grep -q '<ssl id="defaultSSLConfig"[^>]*serverKeyAlias=' "$xml"; then
  sed -i "/<ssl id=\"defaultSSLConfig\"/s/serverKeyAlias=\"[^\"]*\"/serverKeyAlias=\"$alias\"/" "$xml"
else
  sed -i "s/<ssl id=\"defaultSSLConfig\"/& serverKeyAlias=\"$alias\"/" "$xml"
fi
bash "$start" "$server"

# 3. The server presents the new certificate.
got=$(served)
[[ "$got" == "$want" ]] || die "the server presents ${got:-no certificate}, not '$alias' ($want). The old server.xml is $xml.before-$alias."
echo "Liberty server $server presents '$alias' from the token: $want"
