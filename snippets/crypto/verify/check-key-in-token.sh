#!/usr/bin/env bash
# Proves that the private key of the certificate a TLS server presents lives in an openCryptoki token and can
# never leave it: the token holds an RSA private key with the certificate's modulus, and that key is private,
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
served=$(openssl s_client -connect "$target" -servername "${SERVER_NAME:-${target%:*}}" "${sigalgs[@]}" </dev/null 2>/dev/null |
         openssl x509 -noout -modulus 2>/dev/null | sed -n 's/^Modulus=//p') || true
[[ -n $served ]] || die "no certificate from $target: is the server listening there with TLS?"

listing=$(PKCS11_USER_PIN=$TOKEN_USER_PIN p11sak list-key private --slot "$SLOT" --long 2>&1) ||
  die "p11sak could not list the keys of slot $SLOT as $(id -un): $(tail -n 1 <<<"$listing")"

# One line per RSA private key: MODULUS PRIVATE SENSITIVE EXTRACTABLE NEVER_EXTRACTABLE LOCAL
keys=$(awk '
  function flush() { if (mod != "") print mod, a["CKA_PRIVATE"], a["CKA_SENSITIVE"], a["CKA_EXTRACTABLE"],
                       a["CKA_NEVER_EXTRACTABLE"], a["CKA_LOCAL"]; mod = ""; inmod = 0; delete a }
  /^Label:/ { flush(); next }
  /CKA_MODULUS: len=/ { inmod = 1; next }
  inmod && /^ *([0-9A-F][0-9A-F] *)+$/ { gsub(/ /, ""); mod = mod $0; next }
  { inmod = 0 }
  /^ *CKA_[A-Z_]+: CK_(TRUE|FALSE)$/ { k = $1; sub(/:$/, "", k); a[k] = $2 }
  END { flush() }' <<<"$listing")

match=$(awk -v m="$served" '$1 == m' <<<"$keys")
[[ -n $match ]] || die "no private key in slot $SLOT has the modulus of the certificate $target presents: the server's key is not in this token (a keystore file, another slot?)."
read -r _ private sensitive extractable never_extractable local <<<"$match"
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
