#!/usr/bin/env bash
# Generates the server's RSA key pair IN the token, with a self-signed certificate beside it, and exports the
# certificate. Run as the WebSphere user (a member of pkcs11), with the token's user PIN in TOKEN_USER_PIN:
#   TOKEN_USER_PIN=... bash generate-token-key.sh ALIAS CN [CERT_FILE]
# -providerName makes keytool ask the token's provider to generate the key. Without it keytool generates the
# key in software and imports it: the object is then neither local nor never-extractable, and a software
# provider can sign with it.
# Defaults are WebSphere 9.0.5's IBM SDK 8 (keystore type PKCS11IMPLKS of IBMPKCS11Impl); the runbook's checks
# run it with OpenJDK's SunPKCS11: KEYTOOL=keytool STORETYPE=PKCS11 PROVIDER_CLASS=sun.security.pkcs11.SunPKCS11.
set -euo pipefail

die() { echo "generate-token-key: $*" >&2; exit 1; }
[[ $# -ge 2 ]] || die "usage: TOKEN_USER_PIN=... $0 ALIAS CN [CERT_FILE]"
alias=$1 cn=$2 cert=${3:-$1.pem}
config=${TOKEN_CONFIG:-/etc/websphere/pkcs11-ica-token.cfg}
keytool=${KEYTOOL:-/opt/IBM/WebSphere/AppServer/java/8.0/bin/keytool}
storetype=${STORETYPE:-PKCS11IMPLKS}
provider_class=${PROVIDER_CLASS:-com.ibm.crypto.pkcs11impl.provider.IBMPKCS11Impl}
keysize=${KEY_SIZE:-2048}
sigalg=${SIGALG:-SHA256withRSA}  # of the self-signed certificate, made by the token

[[ -n ${TOKEN_USER_PIN:-} ]] || die "set TOKEN_USER_PIN to the token's user PIN (read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN)."
command -v "$keytool" >/dev/null || die "no keytool at $keytool: set KEYTOOL to the keytool of the server's Java."
[[ -r $config ]] || die "cannot read the token configuration $config as $(id -un): see step 2 (set TOKEN_CONFIG for another path)."
name=$(sed -n 's/^name *= *\([^ ]*\).*/\1/p' "$config" | head -n 1)
[[ -n $name ]] || die "$config has no 'name = ...' line, so the provider's name is unknown."
provider_name=${PROVIDER_NAME:-${provider_class##*.}-$name}
[[ -e $cert ]] && die "$cert exists; remove it or give another CERT_FILE."

store=(-keystore NONE -storetype "$storetype" -providerClass "$provider_class" -providerArg "$config"
       -providerName "$provider_name" -storepass:env TOKEN_USER_PIN)
if "$keytool" -list "${store[@]}" -alias "$alias" >/dev/null 2>&1; then
  die "the token already holds an entry '$alias'; choose another alias or remove the old entry first."
fi
"$keytool" -genkeypair "${store[@]}" -alias "$alias" -keyalg RSA -keysize "$keysize" -sigalg "$sigalg" \
  -dname "CN=$cn" -ext "san=dns:$cn" -validity 825
"$keytool" -exportcert -rfc "${store[@]}" -alias "$alias" -file "$cert"
echo "key pair '$alias' generated in the token by $provider_name; certificate in $cert"
