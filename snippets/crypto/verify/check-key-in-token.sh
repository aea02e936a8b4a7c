#!/usr/bin/env bash
# Proves that the private key of the certificate a TLS server presents lives in an openCryptoki token and can
# never leave it: the token holds a private key with the certificate's public key (RSA: its modulus; ECDSA: its
# public key info), and that key is private,
# sensitive, never extractable and local (generated in the token, not imported). Then no copy of the key can
# exist in a file, in the server's configuration or anywhere else.
# Run as the server's user (a member of pkcs11) with the token's user PIN in TOKEN_USER_PIN:
#   TOKEN_USER_PIN=... SLOT=1 bash check-key-in-token.sh HOST:PORT
# Needs openssl and p11sak from openCryptoki 3.21 or later (list-key --long).
set -euo pipefail

die() { echo "check-key-in-token: $*" >&2; exit 1; }
[[ $# -eq 1 && $1 == *:* ]] || die "usage: TOKEN_USER_PIN=... SLOT=N $0 HOST:PORT"
target=$1
[[ -n ${SLOT:-} ]] || die "set SLOT to the token's slot number (pkcsconf -s lists them)."
[[ -n ${TOKEN_USER_PIN:-} ]] || die "set TOKEN_USER_PIN to the token's user PIN (read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN)."
for tool in openssl p11sak; do
  command -v "$tool" >/dev/null || die "$tool is missing: install openssl and opencryptoki."
done
p11sak_help=$(p11sak list-key --help 2>&1 || true)
[[ $p11sak_help == *--long* ]] ||
  die "this p11sak cannot list key attributes (list-key --long): it needs openCryptoki 3.21 or later."

# SERVER_NAME (optional): the name to ask for (SNI) when HOST is not the certificate's name. SIGALGS (optional):
# the signature schemes to offer, so that the handshake does not make the token fail a hash it cannot do (the
# runbook's s390x host under qemu has no SHA-256 in the ICA token; IBM Z does not need it).
sigalgs=()
[[ -z ${SIGALGS:-} ]] || sigalgs=(-sigalgs "$SIGALGS")
# SIGALGS also chooses the certificate of a server that has two (ECDSA+SHA256: the ECDSA one, rsa_pss_rsae_sha256: RSA).
cert=$(openssl s_client -connect "$target" -servername "${SERVER_NAME:-${target%:*}}" "${sigalgs[@]}" </dev/null 2>/dev/null |
       openssl x509 2>/dev/null) || true
[[ -n $cert ]] || die "no certificate from $target: is the server listening there with TLS?"
# The certificate's public key info (DER, upper-case hex) and, for RSA, its modulus.
served_spki=$(openssl x509 -noout -pubkey <<<"$cert" | openssl pkey -pubin -outform DER | od -An -v -tx1 |
              tr -d ' \n' | tr a-f A-F)
served_mod=$(openssl x509 -noout -modulus <<<"$cert" 2>/dev/null | sed -n 's/^Modulus=//p') || true

listing=$(PKCS11_USER_PIN=$TOKEN_USER_PIN p11sak list-key private --slot "$SLOT" --long 2>&1) ||
  die "p11sak could not list the keys of slot $SLOT as $(id -un): $(tail -n 1 <<<"$listing")"

# One line per private key: PUBLIC_KEY_INFO MODULUS PRIVATE SENSITIVE EXTRACTABLE NEVER_EXTRACTABLE LOCAL, with "-"
# for a value the key lacks (an EC key has no modulus; a key made before PKCS #11 3.0 may lack its public key info).
keys=$(awk '
  function flush() { if (spki != "" || mod != "") print (spki == "" ? "-" : spki), (mod == "" ? "-" : mod),
                       a["CKA_PRIVATE"], a["CKA_SENSITIVE"], a["CKA_EXTRACTABLE"], a["CKA_NEVER_EXTRACTABLE"],
                       a["CKA_LOCAL"]; spki = ""; mod = ""; in_hex = ""; delete a }
  /^Label:/ { flush(); next }
  /CKA_PUBLIC_KEY_INFO: len=/ { in_hex = "spki"; next }
  /CKA_MODULUS: len=/ { in_hex = "mod"; next }
  in_hex != "" && /^ *([0-9A-F][0-9A-F] *)+$/ { gsub(/ /, ""); if (in_hex == "spki") spki = spki $0; else mod = mod $0; next }
  { in_hex = "" }
  /^ *CKA_[A-Z_]+: CK_(TRUE|FALSE)$/ { k = $1; sub(/:$/, "", k); a[k] = $2 }
  END { flush() }' <<<"$listing")

match=$(awk -v s="$served_spki" -v m="${served_mod:--}" '$1 == s || (m != "-" && $2 == m) { print; exit }' <<<"$keys")
[[ -n $match ]] || die "no private key in slot $SLOT has the public key of the certificate $target presents: the server's key is not in this token (a keystore file, another slot?)."
read -r _ _ private sensitive extractable never_extractable local <<<"$match"
fail=()
[[ $private == CK_TRUE ]] || fail+=("CKA_PRIVATE is false: the token stores the object unencrypted")
[[ $sensitive == CK_TRUE ]] || fail+=("CKA_SENSITIVE is false: the key's private parts can be read out")
[[ $extractable == CK_FALSE ]] || fail+=("CKA_EXTRACTABLE is true: the key can be wrapped out of the token")
[[ $never_extractable == CK_TRUE ]] || fail+=("CKA_NEVER_EXTRACTABLE is false: the key was extractable once")
[[ $local == CK_TRUE ]] || fail+=("CKA_LOCAL is false: the key was made outside the token and imported, so copies may exist")
if ((${#fail[@]})); then
  printf 'check-key-in-token: the key of %s is in slot %s, but:\n' "$target" "$SLOT" >&2
  printf '  %s\n' "${fail[@]}" >&2
  exit 1
fi
echo "The key of the certificate $target presents is in slot $SLOT: private, sensitive, never extractable, generated in the token."
