#!/usr/bin/env bash
# Proves that an httpd OpenSSL configuration for FIPS mode with the key in the token does what it says: the fips and
# pkcs11 providers are active and the default provider is not, each key of the site that is in the token signs (the
# signature verified with its certificate's public key by the FIPS provider), each RSA key has 3072 bits or more
# (libica 4.4.2 in FIPS mode refuses smaller ones, so the ICA token could not use it), and MD5 is refused.
# Usage: check-token-fips.sh CONFIG SITE   e.g. /etc/ssl/openssl-pkcs11-fips.conf /etc/apache2/sites-available/tls.conf
# Run as root (pkcs11-provider reads the token's PIN file). It changes nothing.
set -euo pipefail

die() { echo "check-token-fips: $*" >&2; exit 1; }
(($# == 2)) || die "usage: $0 CONFIG SITE"
[[ -r $1 ]] || die "cannot read the configuration $1."
[[ -r $2 ]] || die "cannot read the site $2."
command -v openssl >/dev/null || die "openssl is missing: install the openssl package."
export OPENSSL_CONF=$1
site=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The token library the configuration names must exist here: the file as shipped names IBM Z's folder, and on
# another machine (or with the edit forgotten) OpenSSL says only "Error loading key".
module=$(sed -n 's/^[[:space:]]*pkcs11-module-path[[:space:]]*=[[:space:]]*//p' "$OPENSSL_CONF" | tail -n 1)
if [[ -n $module && ! -f $module ]]; then
  here=$(sed -E "s#^/usr/lib/[a-z0-9_]+-linux-gnu/#/usr/lib/$(uname -m)-linux-gnu/#" <<<"$module")
  [[ $here != "$module" && -f $here ]] && die "$OPENSSL_CONF names the token library $module, which does not exist" \
    "here; on this $(uname -m) machine it is $here: write that as pkcs11-module-path."
  die "$OPENSSL_CONF names the token library $module, which does not exist: install openCryptoki or correct" \
    "pkcs11-module-path."
fi
providers=$(openssl list -providers 2>&1) || die "openssl could not load $OPENSSL_CONF: $(tail -n 1 <<<"$providers")"
active=$(awk '/^  [a-z0-9_-]+$/ { name = $1 } /^    status: active/ { printf "%s%s", sep, name; sep = " " }' <<<"$providers")
[[ " $active " == *" fips "* ]] || die "the fips provider is not active (active: ${active:-none}): check that" \
  "/etc/ssl/fipsmodule.cnf matches this fips.so (openssl fipsinstall -verify)."
[[ " $active " == *" pkcs11 "* ]] || die "pkcs11-provider is not active (active: ${active:-none})."
[[ " $active " != *" default "* ]] || die "the default provider is active beside fips (active: $active)."
if openssl dgst -md5 </dev/null >/dev/null 2>&1; then
  die "MD5 still works with $OPENSSL_CONF: set default_properties = fips=yes in its algorithm section."
fi

# Each SSLCertificateFile with the SSLCertificateKeyFile after it; only keys in the token (pkcs11: URIs) count.
mapfile -t pairs < <(awk '$1 == "SSLCertificateFile" { cert = $2 }
  $1 == "SSLCertificateKeyFile" { key = $2; gsub(/"/, "", key); if (key ~ /^pkcs11:/) print cert " " key }' "$site")
((${#pairs[@]} > 0)) || die "$site names no key in a token (no SSLCertificateKeyFile with a pkcs11: URI)."
echo "check-token-fips" >"$tmp/data"
openssl dgst -sha256 -binary -out "$tmp/digest" "$tmp/data"
for pair in "${pairs[@]}"; do
  cert=${pair%% *} key=${pair#* }
  openssl x509 -in "$cert" -noout -pubkey >"$tmp/pub.pem" || die "cannot read the certificate $cert."
  opts=(-pkeyopt digest:sha256)
  text=$(openssl pkey -pubin -in "$tmp/pub.pem" -noout -text)
  [[ $text == *"ASN1 OID"* ]] && opts=()  # ECDSA: the digest as is
  bits=$(sed -n 's/^Public-Key: (\([0-9]*\) bit).*/\1/p' <<<"$text")
  if [[ $text != *"ASN1 OID"* ]] && ((${bits:-0} < 3072)); then
    die "the key $key is RSA ${bits:-?}: libica 4.4.2 and later refuse RSA below 3072 bits in FIPS mode, so the ICA" \
      "token cannot sign with it there. Make the site a key of 3072 bits or more (the key step with 'rsa 4096':" \
      "p11sak makes 3072 only from openCryptoki 3.26) or a P-256 key."
  fi
  openssl pkeyutl -sign -inkey "$key" "${opts[@]}" -in "$tmp/digest" -out "$tmp/sig" 2>"$tmp/err" ||
    die "the key $key did not sign with $OPENSSL_CONF: $(tail -n 1 "$tmp/err")"
  openssl pkeyutl -verify -pubin -inkey "$tmp/pub.pem" "${opts[@]}" -in "$tmp/digest" -sigfile "$tmp/sig" >/dev/null ||
    die "the signature of $key does not match the public key of $cert."
  echo "signed in the token under FIPS: $key (verified with $cert)"
done
version=$(awk '/^  fips$/ { f = 1 } f && /version:/ { print $2; exit }' <<<"$providers")
echo "OpenSSL with $OPENSSL_CONF: FIPS provider ${version:-?} and pkcs11-provider active (active: $active); MD5 refused."
