#!/usr/bin/env bash
# negates: daytwo/switch-token-certificate.sh
# checker: testinfra
# rejects: served_to(host, ECDSA_ONLY, ca) == ""
# test: checks/daytwo/test_renew_token_certificate.py::test_the_switch_as_it_was_drops_the_ecdsa_pair_of_the_two_key_site
# NEGATIVE CASE (checks/daytwo/test_renew_token_certificate.py): the switch step before 2026-11-27. Its sed
# rewrote every SSLCertificateFile and SSLCertificateKeyFile line, so on a site with an RSA and an ECDSA pair it
# served the new RSA pair twice, dropped the ECDSA certificate and reported success; ECDSA-only clients then failed.
# Switch an Apache token site to a renewed certificate whose new key is already in the token, with a graceful
# reload: running connections finish on the old workers, new ones get the new certificate. Run as root.
# Usage: switch-token-certificate.sh NEW_CERT NEW_KEY_LABEL
# Environment: SITE_CONF (the site file, default Debian's /etc/apache2/sites-available/tls.conf),
# OPENSSL_PKCS11_CONF (/etc/ssl/openssl-pkcs11.conf), BACKUP_DIR (/var/backups), TOKEN_LABEL (IBMICATOK),
# SERVER_NAME (www.example.com), PORT (443). No PIN: the token key is read through the PIN file that
# OPENSSL_PKCS11_CONF names, as httpd reads it.
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

# 2. The site names the new certificate and key; the old file is kept for going back (outside httpd's folders, which
# httpd would read and the removal of the old key checks), and comes back if httpd's syntax check fails.
backup_dir="${BACKUP_DIR:-/var/backups}"
install -d -m 0700 "$backup_dir"
backup="$backup_dir/$(basename "$SITE_CONF").before-renewal"
cp -p "$SITE_CONF" "$backup"
sed -i -E \
  -e "s#^([[:space:]]*SSLCertificateFile[[:space:]]+).*#\1$new_cert#" \
  -e "s#^([[:space:]]*SSLCertificateKeyFile[[:space:]]+\"pkcs11:[^\"]*object=)[^;\"]*#\1$new_label#" "$SITE_CONF"
if ! apachectl -t 2>&1; then
  cp -p "$backup" "$SITE_CONF"
  echo "httpd's syntax check failed with the new site: $SITE_CONF is back as it was, httpd was not reloaded." >&2
  exit 1
fi

# 3. The graceful reload, then the outcome: the server presents the new certificate (the parent reloads in the
# background: up to 30 s).
apachectl graceful
want=$(openssl x509 -in "$new_cert" -noout -fingerprint -sha256)
for ((i = 0; i < 60; i++)); do
  served=$(openssl s_client -connect "127.0.0.1:$PORT" -servername "$SERVER_NAME" </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256 2>/dev/null || true)
  if [[ "$served" == "$want" ]]; then
    echo "httpd presents the new certificate ($want), key $new_label in token $TOKEN_LABEL."
    echo "The previous site file is $backup."
    exit 0
  fi
  sleep 0.5
done
echo "httpd still does not present $new_cert 30 s after the graceful reload (it presents: ${served:-nothing})." \
  "Look in httpd's error log." >&2
exit 1
