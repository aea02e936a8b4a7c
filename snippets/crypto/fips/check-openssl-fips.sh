#!/usr/bin/env bash
# Proves that OpenSSL, with the configuration a service gets (OPENSSL_CONF, else the system's), answers only with
# its FIPS provider: the fips provider is active (it loads only after its self-tests and integrity check pass),
# and what the FIPS provider does not offer or forbids is refused: MD5, ChaCha20 and new RSA keys under 2048 bits,
# while SHA-256, AES and ECDSA P-256 work.
# Usage: check-openssl-fips.sh [CONFIG]   CONFIG: the service's OpenSSL configuration, e.g. /etc/ssl/openssl-fips.cnf
# (default: OPENSSL_CONF, else the system's). Any user; it changes nothing.
set -euo pipefail

die() { echo "check-openssl-fips: $*" >&2; exit 1; }
(($# <= 1)) || die "usage: $0 [CONFIG]"
if (($# == 1)); then
  [[ -r $1 ]] || die "cannot read the configuration $1."
  export OPENSSL_CONF=$1
fi
command -v openssl >/dev/null || die "openssl is missing: install the openssl package."
conf=${OPENSSL_CONF:-"the system configuration"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# openssl list -providers: one block per provider, "  NAME" then "    status: active".
providers=$(openssl list -providers 2>&1) || die "openssl could not load $conf: $(tail -n 1 <<<"$providers")"
active=$(awk '/^  [a-z0-9_-]+$/ { name = $1 } /^    status: active/ { printf "%s%s", sep, name; sep = " " }' <<<"$providers")
[[ " $active " == *" fips "* ]] ||
  die "the fips provider is not active with $conf (active: ${active:-none}): set OPENSSL_CONF to the FIPS" \
    "configuration, and check that its fipsmodule.cnf matches this fips.so (openssl fipsinstall -verify)."

refused=()
openssl dgst -md5 </dev/null >/dev/null 2>&1 || refused+=(MD5)
openssl enc -chacha20 -K "$(printf '%064d' 0)" -iv "$(printf '%032d' 0)" </dev/null >/dev/null 2>&1 || refused+=(ChaCha20)
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$tmp/rsa1024.pem" >/dev/null 2>&1 ||
  refused+=("RSA-1024 key generation")
((${#refused[@]} == 3)) ||
  die "with $conf, OpenSSL still offers what the FIPS provider does not: only ${refused[*]:-nothing} of MD5," \
    "ChaCha20 and RSA-1024 key generation was refused (active providers: $active). Set default_properties =" \
    "fips=yes in the configuration's algorithm section, or activate no provider but fips and base."

openssl dgst -sha256 </dev/null >/dev/null || die "SHA-256 failed with $conf: the fips provider does not work."
openssl enc -aes-256-cbc -K "$(printf '%064d' 0)" -iv "$(printf '%032d' 0)" </dev/null >/dev/null ||
  die "AES-256-CBC failed with $conf: the fips provider does not work."
if ! { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/p256.pem" &&
       openssl dgst -sha256 -sign "$tmp/p256.pem" -out "$tmp/sig" </dev/null; }; then
  die "an ECDSA P-256 signature failed with $conf: the fips provider does not work."
fi

version=$(awk '/^  fips$/ { f = 1 } f && /version:/ { print $2; exit }' <<<"$providers")
echo "OpenSSL with $conf answers from the FIPS provider ${version:-?} (active: $active)."
echo "Refused: ${refused[*]}. Working: SHA-256, AES-256-CBC, ECDSA P-256."
