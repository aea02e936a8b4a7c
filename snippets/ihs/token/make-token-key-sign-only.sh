#!/usr/bin/env bash
# Right after the certificate step (GSKit's key is extractable): make the token's private key CERT_LABEL sign-only
# and not extractable (CKA_EXTRACTABLE, CKA_DECRYPT, CKA_UNWRAP false). PKCS #11 never lets them turn true again.
# Needs TOKEN_USER_PIN and pkcsslotd; TOKEN_LABEL and CERT_LABEL default to this chapter's (WebSEAL: its own).
set -euo pipefail

TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
CERT_LABEL="${CERT_LABEL:-ihscert}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"
for tool in p11sak pkcsconf; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: install openCryptoki." >&2; exit 1; }
done
slot=$(pkcsconf -t 2>/dev/null |
  awk -v l="$TOKEN_LABEL" '/^Token #/ { s = substr($2, 2) } $1 == "Label:" && $2 == l { print s; exit }')
[[ -n $slot ]] || { echo "No token labelled $TOKEN_LABEL: is pkcsslotd running, and are you in pkcs11?" >&2; exit 1; }
export PKCS11_USER_PIN=$TOKEN_USER_PIN  # p11sak reads the PIN from there, not from its command line
listed=$(p11sak list-key private --slot "$slot" --label "$CERT_LABEL" --long) ||
  { echo "p11sak could not list the keys of token $TOKEN_LABEL (slot $slot): check TOKEN_USER_PIN." >&2; exit 1; }
grep -q 'CKA_EXTRACTABLE' <<<"$listed" ||
  { echo "Token $TOKEN_LABEL has no private key labelled $CERT_LABEL: run the certificate step first." >&2; exit 1; }
if grep -q 'CKA_EXTRACTABLE: CK_FALSE' <<<"$listed"; then
  echo "The key $CERT_LABEL in token $TOKEN_LABEL is not extractable already."
  exit 0
fi
# x: CKA_EXTRACTABLE, d: CKA_DECRYPT, u: CKA_UNWRAP, lower case for false (p11sak's attribute letters).
p11sak set-key-attr private --slot "$slot" --label "$CERT_LABEL" --new-attr xdu --force
echo "The key $CERT_LABEL in token $TOKEN_LABEL now only signs and cannot be wrapped out (CKA_NEVER_EXTRACTABLE stays false)."
