#!/usr/bin/env bash
# Generate httpd's key pair inside the openCryptoki token (sign-only, sensitive, never extractable), store
# the PIN file, and write a CSR for your CA. Run as root; needs p11sak from openCryptoki 3.21 or later. Root writes
# the PIN file and the request; every token tool runs as the token administrator, TOKEN_ADMIN (a member of pkcs11,
# not root; default SUDO_USER): before openCryptoki 3.27 a root-run token tool follows a link a pkcs11 member
# planted in the token folders (CVE-2026-23893).
# Usage: create-token-key-and-csr.sh [rsa [BITS]|ec]   rsa: RSA of BITS (2048 unless given); ec: ECDSA on NIST P-256
# BITS is 2048, 3072 or 4096 (or RSA_BITS in the environment). A FIPS site needs 3072 or more: libica 4.4.2 in FIPS
# mode refuses smaller RSA keys. p11sak makes 3072 only from openCryptoki 3.26 on, so before it use 4096.
# Environment: TOKEN_USER_PIN; optional TOKEN_LABEL, KEY_LABEL, SERVER_NAME, PIN_FILE, and PKCS11_LIB, which
# defaults to openCryptoki's library on RHEL, SLES, Ubuntu and Debian. A key of other than 2048 bits gets its own
# label and request by default (apachekey-BITS, /etc/ssl/SERVER_NAME-BITS.csr), beside the site's current key.
set -euo pipefail

(($# <= 2)) || { echo "Usage: $0 [rsa [BITS]|ec]" >&2; exit 2; }
KEY_TYPE="${1:-rsa}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}"
SERVER_NAME="${SERVER_NAME:-www.example.com}"
PIN_FILE="${PIN_FILE:-/etc/ssl/private/apache-token.pin}"
OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
case "$KEY_TYPE" in
    rsa) key_size="${2:-${RSA_BITS:-2048}}"; key_name="RSA $key_size"; csr_hash=-sha512
         if [[ $key_size == 2048 ]]; then
             KEY_LABEL="${KEY_LABEL:-apachekey}"; CSR="${CSR:-/etc/ssl/$SERVER_NAME.csr}"
         else
             KEY_LABEL="${KEY_LABEL:-apachekey-$key_size}"; CSR="${CSR:-/etc/ssl/$SERVER_NAME-$key_size.csr}"
         fi ;;
    ec)  (($# <= 1)) || { echo "An ECDSA key takes no size: it is P-256 (usage: $0 [rsa [BITS]|ec])." >&2; exit 2; }
         KEY_LABEL="${KEY_LABEL:-apachekey-ec}"; CSR="${CSR:-/etc/ssl/$SERVER_NAME-ecdsa.csr}"
         key_size=prime256v1; key_name="ECDSA P-256"; csr_hash=-sha256 ;;
    *)   echo "The key type '$KEY_TYPE' is neither rsa nor ec (usage: $0 [rsa [BITS]|ec])." >&2; exit 2 ;;
esac
if [[ $KEY_TYPE == rsa && ! $key_size =~ ^(2048|3072|4096)$ ]]; then
    echo "The RSA key size $key_size is not 2048, 3072 or 4096 (3072 or more for a FIPS site)." >&2
    exit 2
fi
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL}"

# openCryptoki's library where RHEL/SLES and Ubuntu/Debian install it.
RHEL_SLES_LIB=/usr/lib64/opencryptoki/libopencryptoki.so
UBUNTU_DEBIAN_LIB="/usr/lib/$(uname -m)-linux-gnu/pkcs11/libopencryptoki.so"
if [[ -z "${PKCS11_LIB:-}" ]]; then
    if [[ -f "$RHEL_SLES_LIB" ]]; then PKCS11_LIB=$RHEL_SLES_LIB; else PKCS11_LIB=$UBUNTU_DEBIAN_LIB; fi
fi

[[ $EUID -eq 0 ]] || { echo "Run this as root: it writes under /etc/ssl." >&2; exit 1; }
command -v p11sak >/dev/null || { echo "p11sak is missing: install openCryptoki (its package brings p11sak)." >&2; exit 1; }
command -v pkcsconf >/dev/null || { echo "pkcsconf is missing: install openCryptoki." >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is missing: install openssl." >&2; exit 1; }
# p11sak takes separate attributes for the public and the private key (PUB:PRIV) from openCryptoki 3.21.
p11sak_version=$(p11sak --version 2>/dev/null | sed -n 's/^p11sak version \([0-9]*\.[0-9]*\).*/\1/p' || true)
if [[ -z "$p11sak_version" ]] || ! printf '3.21\n%s\n' "$p11sak_version" | sort -C -V; then
    echo "p11sak ${p11sak_version:-(version unknown)} is older than openCryptoki 3.21, which this step needs:" \
        "update openCryptoki." >&2
    exit 1
fi
# Before 3.26 p11sak takes RSA key sizes from a list: 512, 1024, 2048 and 4096.
if [[ $KEY_TYPE == rsa && $key_size == 3072 ]] && ! printf '3.26\n%s\n' "$p11sak_version" | sort -C -V; then
    echo "p11sak $p11sak_version makes RSA keys of 512, 1024, 2048 or 4096 bits only (3072 from openCryptoki 3.26):" \
        "make a 4096-bit key (a FIPS site needs 3072 or more)." >&2
    exit 2
fi
[[ -f "$PKCS11_LIB" ]] || { echo "openCryptoki's library $PKCS11_LIB does not exist (RHEL/SLES have $RHEL_SLES_LIB," \
    "Ubuntu/Debian $UBUNTU_DEBIAN_LIB): install openCryptoki or set PKCS11_LIB." >&2; exit 1; }
[[ -f "$OPENSSL_PKCS11_CONF" ]] ||
    { echo "$OPENSSL_PKCS11_CONF is missing: install the OpenSSL configuration for pkcs11-provider first." >&2; exit 1; }
module=$(sed -n 's/^ *pkcs11-module-path *= *//p' "$OPENSSL_PKCS11_CONF")
if [[ ! -f "$module" ]]; then
    # The Ubuntu/Debian file names IBM Z's folder (s390x-linux-gnu); another architecture has its own.
    here=$(sed -E "s#^/usr/lib/[a-z0-9_]+-linux-gnu/#/usr/lib/$(uname -m)-linux-gnu/#" <<<"$module")
    if [[ "$here" != "$module" && -f "$here" ]]; then
        echo "$OPENSSL_PKCS11_CONF names the library '$module', the folder of another architecture; on this" \
            "$(uname -m) machine it is '$here': write that as pkcs11-module-path in $OPENSSL_PKCS11_CONF." >&2
    else
        echo "$OPENSSL_PKCS11_CONF names the library '$module', which does not exist here:" \
            "install the OpenSSL configuration for your distribution." >&2
    fi
    exit 1
fi
# pkcs11-provider's module must be where OpenSSL loads providers from (openssl version -m).
modules=$(openssl version -m | sed -n 's/^MODULESDIR: "\(.*\)"$/\1/p')
[[ -f "$modules/pkcs11.so" ]] || { echo "pkcs11-provider is missing (no pkcs11.so in $modules):" \
    "install the pkcs11-provider package." >&2; exit 1; }

TOKEN_ADMIN="${TOKEN_ADMIN:-${SUDO_USER:-}}"
[[ -n "$TOKEN_ADMIN" && "$TOKEN_ADMIN" != root ]] || { echo "Set TOKEN_ADMIN to the token administrator, a member" \
    "of pkcs11 other than root: this step runs the token tools as that user, never as root." >&2; exit 1; }
id -nG "$TOKEN_ADMIN" 2>/dev/null | tr ' ' '\n' | grep -qx pkcs11 || { echo "$TOKEN_ADMIN is not a member of the" \
    "group pkcs11 (or no such user): add the token administrator with the crypto chapter's step." >&2; exit 1; }
command -v runuser >/dev/null || { echo "runuser is missing: install util-linux." >&2; exit 1; }
# A token tool as the token administrator, from / (root's working folder may be closed to that user).
as_admin() { (cd / && runuser -u "$TOKEN_ADMIN" -- "$@"); }

# The slot of the token: pkcsconf -t prints "Token #N Info:" and then the token's "Label:".
slot=$({ as_admin pkcsconf -t 2>/dev/null || true; } | awk -v want="$TOKEN_LABEL" '
    /^Token #[0-9]+ Info:/ { slot = substr($2, 2) }
    /^[[:space:]]*Label:/  { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, "")
                             if ($0 == want) { print slot; exit } }')
[[ -n "$slot" ]] || { echo "No token labelled $TOKEN_LABEL in 'pkcsconf -t': initialise it first (crypto chapter)," \
    "or set TOKEN_LABEL." >&2; exit 1; }

# p11sak reads the PIN from PKCS11_USER_PIN, so it never appears on a command line.
p11() { PKCS11_USER_PIN="$TOKEN_USER_PIN" as_admin p11sak "$@"; }
existing=$(p11 list-key "$KEY_TYPE" --slot "$slot" --label "$KEY_LABEL" --long) ||
    { echo "p11sak could not list the keys of token $TOKEN_LABEL (slot $slot): is the user PIN right?" >&2; exit 1; }
# one line per attribute of the private key: CKA_EXTRACTABLE: CK_FALSE, ...
private_attrs=$(awk '/^Label:/ { priv = 0 } /Key: private/ { priv = 1 } priv && /CKA_/ { print $1, $2 }' <<<"$existing")
if [[ -n "$private_attrs" ]]; then
    for want in "CKA_SENSITIVE: CK_TRUE" "CKA_EXTRACTABLE: CK_FALSE" "CKA_NEVER_EXTRACTABLE: CK_TRUE"; do
        grep -qx "$want" <<<"$private_attrs" || {
            echo "Key $KEY_LABEL in token $TOKEN_LABEL lacks $want: it can be exported from the token." \
                "Generate a new key under another KEY_LABEL with this snippet, or remove this one" \
                "(p11sak remove-key $KEY_TYPE --slot $slot --label $KEY_LABEL) and run again; then request a new certificate." >&2
            exit 1
        }
    done
    echo "key $KEY_LABEL exists in token $TOKEN_LABEL already: keeping it"
else
    # public key: verify only; private key: private, sensitive, sign only (no decrypt, unwrap, sign-recover),
    # not extractable. Upper case sets an attribute to true, lower case to false (man p11sak).
    # Both halves get the label's bytes as CKA_ID: pkcs11-provider finds an EC private key's public point by it.
    key_id=$(printf '%s' "$KEY_LABEL" | od -An -v -tx1 | tr -d ' \n')
    if ! made=$(p11 generate-key "$KEY_TYPE" "$key_size" --slot "$slot" --label "$KEY_LABEL:$KEY_LABEL" \
                  --id "$key_id" --attr "Vew:PSGcdux" 2>&1); then
        if [[ $made == *CKR_CURVE_NOT_SUPPORTED* ]]; then
            # libica makes EC keys only on CPACF's ECC instructions (MSA 9: z15 and later) or a CCA coprocessor.
            echo "Token $TOKEN_LABEL cannot make a P-256 key on this machine: the ICA token does ECC only with" \
                "CPACF's ECC functions (IBM z15 and later) or an online CCA coprocessor. Make an RSA key" \
                "(no argument), or use a token that does ECC here (CCA, EP11)." >&2
        else
            echo "p11sak could not generate the $key_name key in token $TOKEN_LABEL (slot $slot): $made" >&2
        fi
        exit 1
    fi
    echo "generated $key_name key pair $KEY_LABEL in token $TOKEN_LABEL (sign-only, not extractable)"
fi

# The PIN file, once p11sak has logged in with the PIN: root's alone (0600). httpd's parent process runs as root
# and reads it once, when OpenSSL loads pkcs11-provider; the workers inherit the PIN, so httpd's user needs no
# access to the file. A missing folder is made root's alone (0700); an existing one is left as it is.
pin_dir=$(dirname "$PIN_FILE")
[[ -d "$pin_dir" ]] || install -d -m 0700 -o root -g root "$pin_dir"
(umask 077 && printf '%s' "$TOKEN_USER_PIN" > "$PIN_FILE")
chown root:root "$PIN_FILE"
chmod 0600 "$PIN_FILE"

# RSA: SHA-512, which the token hashes with CPACF where it can; ECDSA P-256: SHA-256, its matching hash. The CA
# signs the certificate with its own hash anyway. The token administrator signs the request: with httpd's OpenSSL
# configuration less its PIN file (root's alone), the PIN from PKCS11_USER_PIN through -passin; root writes the file.
admin_conf=$(mktemp)
trap 'rm -f "$admin_conf"' EXIT
sed '/^[[:space:]]*pkcs11-module-token-pin[[:space:]]*=/d' "$OPENSSL_PKCS11_CONF" >"$admin_conf"
chmod 0644 "$admin_conf"
request=$(PKCS11_USER_PIN="$TOKEN_USER_PIN" as_admin env OPENSSL_CONF="$admin_conf" openssl req -new "$csr_hash" \
    -key "pkcs11:token=$TOKEN_LABEL;object=$KEY_LABEL;type=private" -passin env:PKCS11_USER_PIN \
    -subj "/CN=$SERVER_NAME" -addext "subjectAltName=DNS:$SERVER_NAME") ||
    { echo "openssl could not sign the request with key $KEY_LABEL as $TOKEN_ADMIN (above: why)." >&2; exit 1; }
printf '%s\n' "$request" >"$CSR"
echo "certificate request for $SERVER_NAME: $CSR (send it to your CA)"
