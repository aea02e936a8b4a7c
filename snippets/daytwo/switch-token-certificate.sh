#!/usr/bin/env bash
# Switch an Apache token site to a renewed certificate whose new key is already in the token, with a graceful
# reload: running connections finish on the old workers, new ones get the new certificate. Run as root.
# Usage: switch-token-certificate.sh NEW_CERT NEW_KEY_LABEL
# Environment: SITE_CONF (the site file, default Debian's /etc/apache2/sites-available/tls.conf),
# OPENSSL_PKCS11_CONF (/etc/ssl/openssl-pkcs11.conf), BACKUP_DIR (/var/backups), TOKEN_LABEL (IBMICATOK),
# SERVER_NAME (www.example.com), PORT (443), SIGALGS (optional: the signature schemes its check of the served
# certificate offers). No PIN: the token key is read through the PIN file that OPENSSL_PKCS11_CONF names, as httpd
# reads it.
set -euo pipefail

(($# == 2)) || { echo "Usage: $0 NEW_CERT NEW_KEY_LABEL" >&2; exit 2; }
new_cert=$1 new_label=$2
SITE_CONF="${SITE_CONF:-/etc/apache2/sites-available/tls.conf}"
OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}" SERVER_NAME="${SERVER_NAME:-www.example.com}" PORT="${PORT:-443}"

[[ $EUID -eq 0 ]] || { echo "Run this as root: it edits httpd's site and reloads httpd." >&2; exit 1; }
[[ "$new_label" =~ ^[A-Za-z0-9._-]+$ ]] || { echo "The key label '$new_label' has characters a PKCS #11 URI would" \
  "need to escape: use letters, digits, '.', '_' and '-'." >&2; exit 2; }
for tool in openssl apachectl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: install openssl and Apache httpd." >&2; exit 1; }
done
[[ -r "$new_cert" ]] || { echo "Cannot read the new certificate $new_cert." >&2; exit 1; }
[[ -f "$SITE_CONF" ]] || { echo "The site file $SITE_CONF does not exist: set SITE_CONF to your TLS site." >&2; exit 1; }
grep -q '^[[:space:]]*SSLCertificateKeyFile[[:space:]]*"pkcs11:' "$SITE_CONF" ||
  { echo "$SITE_CONF has no SSLCertificateKeyFile with a pkcs11: URI: this step is for a site whose key is in a token." >&2
    exit 1; }

# 1. Before touching httpd: the new certificate must carry the public key of the token's new key. httpd would
# refuse the pair only when it loads it, after the reload (apachectl -t reads no certificate and no key).
cert_key=$(openssl x509 -in "$new_cert" -noout -pubkey 2>/dev/null) ||
  { echo "$new_cert is not a PEM certificate." >&2; exit 1; }
# Token tools as root: openssl reads the key through httpd's PIN file, which only root may read, because this
# check must find the key the way httpd's parent process will; that process logs in as root at every start.
token_key=$(OPENSSL_CONF="$OPENSSL_PKCS11_CONF" openssl pkey -pubin -pubout \
  -in "pkcs11:token=$TOKEN_LABEL;object=$new_label;type=public" 2>/dev/null) ||
  { echo "Token $TOKEN_LABEL has no key labelled $new_label (or pkcs11-provider cannot log in with its PIN file):" \
      "generate it first." >&2; exit 1; }
if [[ "$cert_key" != "$token_key" ]]; then
  echo "Refused: $new_cert does not carry the public key of $new_label in token $TOKEN_LABEL. httpd was not" \
    "reloaded and keeps serving the old certificate. Have the CA sign the request made with $new_label." >&2
  exit 1
fi
openssl x509 -in "$new_cert" -noout -checkend 0 >/dev/null ||
  { echo "Refused: $new_cert has expired already. httpd was not reloaded." >&2; exit 1; }

# 2. Which pair: a site can serve an RSA and an ECDSA certificate, each an SSLCertificateFile and
# SSLCertificateKeyFile line, paired by their order. On such a site the new certificate replaces the pair whose
# certificate has the same key type, and the other pair stays; a site with one pair has that one replaced.
key_type() { openssl x509 -in "$1" -noout -text 2>/dev/null | sed -n 's/^[[:space:]]*Public Key Algorithm:[[:space:]]*//p' | head -n 1; }
new_type=$(key_type "$new_cert")
mapfile -t certs < <(sed -n -E 's/^[[:space:]]*SSLCertificateFile[[:space:]]+"?([^"[:space:]]+)"?.*/\1/p' "$SITE_CONF")
mapfile -t keys < <(sed -n -E 's/^[[:space:]]*SSLCertificateKeyFile[[:space:]]+"?([^"[:space:]]+)"?.*/\1/p' "$SITE_CONF")
((${#certs[@]} == ${#keys[@]})) || { echo "$SITE_CONF has ${#certs[@]} SSLCertificateFile and ${#keys[@]}" \
  "SSLCertificateKeyFile lines: give each certificate its key line first." >&2; exit 1; }
pair=0
if ((${#certs[@]} == 1)); then
  pair=1
else
  for i in "${!certs[@]}"; do
    [[ $(key_type "${certs[$i]}") == "$new_type" ]] || continue
    ((pair == 0)) || { echo "Refused: $SITE_CONF has more than one $new_type certificate, so this step cannot tell" \
      "which one $new_cert replaces. httpd was not reloaded." >&2; exit 1; }
    pair=$((i + 1))
  done
  ((pair > 0)) || { echo "Refused: none of the ${#certs[@]} certificates $SITE_CONF names has the key type of" \
    "$new_cert ($new_type). httpd was not reloaded." >&2; exit 1; }
fi
[[ ${keys[$((pair - 1))]} == pkcs11:* ]] || { echo "Refused: the key of the certificate ${certs[$((pair - 1))]} is" \
  "the file ${keys[$((pair - 1))]}, not a token key: this step switches token keys only." >&2; exit 1; }

# 3. The site names the new certificate and key in that pair; the old file is kept for going back (outside httpd's
# folders, which httpd would read and the removal of the old key checks), and comes back if httpd's syntax check
# fails.
backup_dir="${BACKUP_DIR:-/var/backups}"
install -d -m 0700 "$backup_dir"
backup="$backup_dir/$(basename "$SITE_CONF").before-renewal"
cp -p "$SITE_CONF" "$backup"
awk -v n="$pair" -v cert="$new_cert" -v label="$new_label" '
  /^[[:space:]]*SSLCertificateFile[[:space:]]/ && ++c == n { match($0, /^[[:space:]]*/); $0 = substr($0, 1, RLENGTH) "SSLCertificateFile " cert }
  /^[[:space:]]*SSLCertificateKeyFile[[:space:]]/ && ++k == n { sub(/object=[^;"]*/, "object=" label) }
  { print }' "$backup" >"$SITE_CONF"
if ! apachectl -t 2>&1; then
  cp -p "$backup" "$SITE_CONF"
  echo "httpd's syntax check failed with the new site: $SITE_CONF is back as it was, httpd was not reloaded." >&2
  exit 1
fi
kept=()
for i in "${!certs[@]}"; do ((i + 1 == pair)) || kept+=("${certs[$i]}"); done

# 4. The graceful reload, then the outcome: the server presents the new certificate (the parent reloads in the
# background: up to 30 s).
apachectl graceful
want=$(openssl x509 -in "$new_cert" -noout -fingerprint -sha256)
# Ask for a signature of the new key's type, so that a site with two pairs shows the one that changed: the list of
# SIGALGS for that type when given (one list per key, as the checks take it: where the token cannot make every hash,
# such as the ICA token under qemu), else every scheme of the type.
read -r -a lists <<<"${SIGALGS:-}"
sigalgs=
for list in "${lists[@]}"; do
  case $new_type:$list in
    rsaEncryption:*[Rr][Ss][Aa]* | rsassaPss:*[Rr][Ss][Aa]* | id-ecPublicKey:*ECDSA*) sigalgs=$list; break ;;
  esac
done
if [[ -z $sigalgs ]]; then
  case $new_type in
    rsaEncryption | rsassaPss) sigalgs=rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:rsa_pss_rsae_sha512:RSA+SHA256:RSA+SHA512 ;;
    id-ecPublicKey) sigalgs=ECDSA+SHA256:ECDSA+SHA384:ECDSA+SHA512 ;;
  esac
fi
for ((i = 0; i < 60; i++)); do
  served=$(openssl s_client -connect "127.0.0.1:$PORT" -servername "$SERVER_NAME" ${sigalgs:+-sigalgs "$sigalgs"} \
    </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256 2>/dev/null || true)
  if [[ "$served" == "$want" ]]; then
    echo "httpd presents the new certificate ($want), key $new_label in token $TOKEN_LABEL."
    ((${#kept[@]} == 0)) || echo "It still serves ${kept[*]} with its own key, as before."
    echo "The previous site file is $backup."
    exit 0
  fi
  sleep 0.5
done
echo "httpd still does not present $new_cert 30 s after the graceful reload (it presents: ${served:-nothing})." \
  "Look in httpd's error log." >&2
exit 1
