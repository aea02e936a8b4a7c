#!/usr/bin/env bash
# Proves that the private key of the certificate a TLS server presents is in an openCryptoki token and cannot be
# exported through PKCS #11: the token holds a private key with the certificate's public key (RSA: its modulus;
# ECDSA: its public key info), and that key is private, sensitive, never extractable and local (generated in the
# token, not imported). It says which token model holds it: the ICA and soft tokens keep the key as an encrypted
# object in the token's store (TOK_OBJ), a file that root and the pkcs11 group can read; CCA and EP11 keep it as a
# secure key, wrapped by the adapter's master key.
# Run as the server's user (a member of pkcs11) with the token's user PIN in TOKEN_USER_PIN:
#   TOKEN_USER_PIN=... SLOT=1 bash check-key-in-token.sh HOST:PORT   (or TOKEN_LABEL=<label> instead of SLOT)
# Needs openssl, pkcsconf and p11sak from openCryptoki 3.21 or later (list-key --long).
# It logs in once, and only after the token's flags (pkcsconf -t, no login) show no wrong PIN since the last
# good login: three wrong PINs in a row lock the token for every service. Exit status: 0 the key is in the
# token; 1 it is not, or the check could not run; 3 the token refused the PIN (one failed login was counted);
# 4 not logged in, because the token's flags say a PIN is doubtful.
set -euo pipefail

die() { echo "check-key-in-token: $*" >&2; exit 1; }
[[ $# -eq 1 && $1 == *:* ]] || die "usage: TOKEN_USER_PIN=... SLOT=N $0 HOST:PORT"
target=$1
[[ -n ${TOKEN_USER_PIN:-} ]] || die "set TOKEN_USER_PIN to the token's user PIN (read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN)."
# openCryptoki's tools are in /usr/sbin, which an ordinary login's PATH lacks on Debian and Ubuntu (added after the
# caller's PATH: verify and the checks run it with the PATH they choose).
PATH="${PATH:+$PATH:}/usr/sbin:/sbin"
for tool in openssl p11sak pkcsconf; do
  command -v "$tool" >/dev/null || die "$tool is missing: install openssl and opencryptoki."
done
# SLOT, or the token's label in TOKEN_LABEL: the slot whose token has that label.
[[ -n ${SLOT:-} || -z ${TOKEN_LABEL:-} ]] ||
  SLOT=$(pkcsconf -t 2>/dev/null | awk -v l="$TOKEN_LABEL" '/^Token #/ { s = substr($2, 2) } $1 == "Label:" && $2 == l { print s; exit }')
[[ -n ${SLOT:-} ]] || die "set SLOT to the token's slot number (pkcsconf -s lists them), or TOKEN_LABEL to its label."
# p11sak lists the key attributes this check reads (list-key --long) from openCryptoki 3.21; older releases accept
# --long too but print no attributes, so the gate is the library's version (pkcsconf -i), not p11sak's help.
version=$(pkcsconf -i 2>/dev/null | sed -n 's/^[[:space:]]*Library Version:\{0,1\}[[:space:]]*\([0-9]*\.[0-9]*\).*/\1/p' | head -n 1 || true)
[[ $version =~ ^([0-9]+)\.([0-9]+)$ ]] ||
  die "pkcsconf -i shows no openCryptoki library version: is pkcsslotd running, and is $(id -un) in pkcs11?"
((BASH_REMATCH[1] > 3 || (BASH_REMATCH[1] == 3 && BASH_REMATCH[2] >= 21))) ||
  die "this is openCryptoki $version: its p11sak cannot list key attributes (list-key --long needs 3.21 or later)."

# SERVER_NAME (optional): the name to ask for (SNI) when HOST is not the certificate's name. SIGALGS (optional):
# the signature schemes to offer, one OpenSSL list per certificate the server has, separated by spaces; the
# check runs once per list (for an RSA and an ECDSA certificate: SIGALGS="rsa_pss_rsae_sha256 ECDSA+SHA256").
# A list also keeps the handshake from making the token fail a hash it cannot do (the runbook's s390x host under
# qemu has no SHA-256 in the ICA token; IBM Z does not need it).
# Without SIGALGS the check asks three times: with OpenSSL's default, then offering RSA schemes only, then ECDSA
# schemes only, and checks each different certificate it gets, so a site with a second key is judged on both. A
# key type the server has no certificate for gets no answer to its question, which is not a failure.
read -r -a lists <<<"${SIGALGS:-}"
discover=0
if ((${#lists[@]} == 0)); then
  lists=("" "rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:rsa_pss_rsae_sha512:RSA+SHA256:RSA+SHA512"
    "ECDSA+SHA256:ECDSA+SHA384:ECDSA+SHA512")
  discover=1
fi

# The token's flags, read without logging in (PKCS #11 CKF_USER_PIN_*): no login when one of them is set.
flags=$(pkcsconf -t -c "$SLOT" 2>&1 | sed -n 's/^[[:space:]]*Flags:[[:space:]]*0x\([0-9A-Fa-f]*\).*/\1/p' | head -n 1 || true)
[[ -n $flags ]] || die "pkcsconf -t -c $SLOT shows no token in slot $SLOT: is pkcsslotd running, and is $(id -un) in pkcs11?"
model=$(pkcsconf -t -c "$SLOT" 2>/dev/null | sed -n 's/^[[:space:]]*Model:[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*$/\1/p' | head -n 1 || true)
case ${model:-unknown} in
  *ICA* | *Soft*) stored="a clear key encrypted at rest in the token's store (TOK_OBJ), not a secure key" ;;
  *CCA* | *EP11*) stored="a secure key, wrapped by the adapter's master key" ;;
  *) stored="stored as the token's model keeps keys" ;;
esac
doubtful=()
(( 16#$flags & 0x10000 )) && doubtful+=("USER_PIN_COUNT_LOW: a wrong user PIN was given since the last good login")
(( 16#$flags & 0x20000 )) && doubtful+=("USER_PIN_FINAL_TRY: one more wrong user PIN locks the token; pkcs11-provider cancels every new login")
(( 16#$flags & 0x40000 )) && doubtful+=("USER_PIN_LOCKED: the user PIN is locked")
(( 16#$flags & 0x80000 )) && doubtful+=("USER_PIN_TO_BE_CHANGED: no user PIN was ever set; the security officer sets one (pkcsconf -u)")
if ((${#doubtful[@]})); then
  printf 'check-key-in-token: not logging in to the token in slot %s (flags 0x%s):\n' "$SLOT" "$flags" >&2
  printf '  %s\n' "${doubtful[@]}" >&2
  echo "  Find and correct the wrong PIN first, then clear the count with clear-pin-count.sh as a pkcs11 member" >&2
  echo "  (at USER_PIN_FINAL_TRY no httpd login clears it); a lock needs the security officer (pkcsconf -u)." >&2
  exit 4
fi

listing=$(PKCS11_USER_PIN=$TOKEN_USER_PIN p11sak list-key private --slot "$SLOT" --long 2>&1) || {
  if grep -qE 'CKR_PIN_(INCORRECT|LOCKED|EXPIRED|LEN_RANGE)' <<<"$listing"; then
    echo "check-key-in-token: the token in slot $SLOT refused the PIN in TOKEN_USER_PIN ($(grep -oE 'CKR_PIN_[A-Z_]+' <<<"$listing" | head -n 1)): do not try again before it is corrected; the token now counts one wrong PIN." >&2
    exit 3
  fi
  die "p11sak could not list the keys of slot $SLOT as $(id -un): $(tail -n 1 <<<"$listing")"
}

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

# One certificate (the one the server chooses for this list of signature schemes): every reason it fails.
check_certificate() {
  local offer=$1 what=${1:-its default certificate}
  local -a sig=()
  local hello alert cert served_spki served_mod match fingerprint
  [[ -z $offer ]] || sig=(-sigalgs "$offer")
  # Only a completed handshake counts: s_client prints the certificate it received even when the server broke the
  # handshake off before its signature.
  if ! hello=$(openssl s_client -connect "$target" -servername "${SERVER_NAME:-${target%:*}}" "${sig[@]}" </dev/null 2>&1); then
    alert=$(grep -o 'alert [a-z ]*[a-z]' <<<"$hello" | head -n 1) || true
    if [[ $alert == "alert internal error" ]]; then
      fail+=("$what: $target broke off the handshake (TLS $alert): the server could not sign with its key. A worker whose token login failed answers so: does its PIN file hold the token's current PIN (check-pin-file.sh)? No further handshake was made: each can cost the token one more failed login.")
      broken=1
      return
    fi
    ((discover && ${#offer})) && return  # a one-type offer refused: no certificate of that key type, nothing to judge
    fail+=("$what: no handshake with $target ($(grep -m 1 -i 'error' <<<"$hello" || echo 'no TLS answer')): is the server listening there with TLS?")
    return
  fi
  cert=$(openssl x509 2>/dev/null <<<"$hello") || true
  if [[ -z $cert ]]; then
    fail+=("$what: no certificate from $target, though the handshake completed")
    return
  fi
  fingerprint=$(openssl x509 -noout -fingerprint -sha256 <<<"$cert" | sed "s/.*=//")
  [[ " ${seen[*]} " == *" $fingerprint "* ]] && return  # the same certificate as before
  seen+=("$fingerprint")
  what="${what} (subject $(openssl x509 -noout -subject -nameopt oneline <<<"$cert" | sed 's/^subject= *//'), key $(
    openssl x509 -noout -text <<<"$cert" | sed -n 's/^[[:space:]]*Public Key Algorithm:[[:space:]]*//p' | head -n 1))"
  # The certificate's public key info (DER, upper-case hex) and, for RSA, its modulus.
  served_spki=$(openssl x509 -noout -pubkey <<<"$cert" | openssl pkey -pubin -outform DER | od -An -v -tx1 |
                tr -d ' \n' | tr a-f A-F)
  served_mod=$(openssl x509 -noout -modulus <<<"$cert" 2>/dev/null | sed -n 's/^Modulus=//p') || true
  match=$(awk -v s="$served_spki" -v m="${served_mod:--}" '$1 == s || (m != "-" && $2 == m) { print; exit }' <<<"$keys")
  if [[ -z $match ]]; then
    fail+=("$what: no private key in slot $SLOT has the public key of the certificate $target presents: the server's key is not in this token (a keystore file, another slot?).")
    return
  fi
  local private sensitive extractable never_extractable local_key
  read -r _ _ private sensitive extractable never_extractable local_key <<<"$match"
  [[ $private == CK_TRUE ]] || fail+=("$what: CKA_PRIVATE is false: the token stores the object unencrypted")
  [[ $sensitive == CK_TRUE ]] || fail+=("$what: CKA_SENSITIVE is false: the key's private parts can be read out")
  [[ $extractable == CK_FALSE ]] || fail+=("$what: CKA_EXTRACTABLE is true: the key can be wrapped out of the token")
  [[ $never_extractable == CK_TRUE ]] || fail+=("$what: CKA_NEVER_EXTRACTABLE is false: the key was extractable once")
  [[ $local_key == CK_TRUE ]] || fail+=("$what: CKA_LOCAL is false: the key was made outside the token and imported, so copies may exist")
}

fail=() seen=() broken=0
for offer in "${lists[@]}"; do
  check_certificate "$offer"
  ((broken == 0)) || break
done
if ((${#fail[@]})); then
  printf 'check-key-in-token: the key of %s is not where it must be (slot %s):\n' "$target" "$SLOT" >&2
  printf '  %s\n' "${fail[@]}" >&2
  exit 1
fi
echo "The key of each certificate $target presents (${#seen[@]}) is in slot $SLOT (token model ${model:-unknown}): private, sensitive, never extractable, generated in the token; $stored; not exportable through PKCS #11."
