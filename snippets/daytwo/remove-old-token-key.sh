#!/usr/bin/env bash
# Remove the previous key pair from the token once the site presents the renewed certificate. Run as root with the
# token's user PIN in TOKEN_USER_PIN (for example TOKEN_USER_PIN=$(cat /etc/ssl/private/apache-token.pin)). Root
# reads httpd's files and its site; the token tools run as the token administrator, TOKEN_ADMIN (a member of pkcs11,
# not root; default SUDO_USER): before openCryptoki 3.27 a root-run token tool follows a link a pkcs11 member
# planted in the token folders (CVE-2026-23893).
# Usage: remove-old-token-key.sh OLD_KEY_LABEL [rsa|ec]
# Environment: TOKEN_USER_PIN; optional TOKEN_LABEL (IBMICATOK), HTTPD_CONF_DIR (/etc/apache2; RHEL /etc/httpd,
# SLES /etc/apache2), SERVER_NAME (www.example.com), PORT (443).
set -euo pipefail

(($# == 1 || $# == 2)) || { echo "Usage: $0 OLD_KEY_LABEL [rsa|ec]" >&2; exit 2; }
old_label=$1 key_type=${2:-rsa}
[[ "$key_type" == rsa || "$key_type" == ec ]] || { echo "The key type '$key_type' is neither rsa nor ec." >&2; exit 2; }
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}" HTTPD_CONF_DIR="${HTTPD_CONF_DIR:-/etc/apache2}"
SERVER_NAME="${SERVER_NAME:-www.example.com}" PORT="${PORT:-443}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN of token $TOKEN_LABEL (read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN)}"

die() { echo "$*" >&2; exit 1; }
[[ $EUID -eq 0 ]] || die "Run this as root: it reads httpd's configuration and asks the site on port $PORT."
TOKEN_ADMIN="${TOKEN_ADMIN:-${SUDO_USER:-}}"
[[ -n $TOKEN_ADMIN && $TOKEN_ADMIN != root ]] || die "Set TOKEN_ADMIN to the token administrator, a member of pkcs11" \
  "other than root: this step runs the token tools as that user, never as root."
id -nG "$TOKEN_ADMIN" 2>/dev/null | tr ' ' '\n' | grep -qx pkcs11 || die "$TOKEN_ADMIN is not a member of the group" \
  "pkcs11 (or no such user): add the token administrator with the crypto chapter's step."
command -v runuser >/dev/null || die "runuser is missing: install util-linux."
# A token tool as the token administrator, from / (root's working folder may be closed to that user).
as_admin() { (cd / && runuser -u "$TOKEN_ADMIN" -- "$@"); }
for tool in p11sak pkcsconf openssl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: install openCryptoki and openssl." >&2; exit 1; }
done
slot=$({ as_admin pkcsconf -t 2>/dev/null || true; } | awk -v want="$TOKEN_LABEL" '
    /^Token #[0-9]+ Info:/ { slot = substr($2, 2) }
    /^[[:space:]]*Label:/  { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, "")
                             if ($0 == want) { print slot; exit } }')
[[ -n "$slot" ]] || { echo "No token labelled $TOKEN_LABEL in 'pkcsconf -t': is pkcsslotd running?" >&2; exit 1; }

# Still in use? No httpd file may name the key, and the site must not present a certificate for it.
if users=$(grep -rlE "object=$old_label([;\"]|$)" "$HTTPD_CONF_DIR" 2>/dev/null); then
  echo "Not removed: httpd's configuration still names $old_label ($(tr '\n' ' ' <<<"$users")). Switch the site first." >&2
  exit 1
fi
p11() { PKCS11_USER_PIN="$TOKEN_USER_PIN" as_admin p11sak "$@"; }
listed=$(p11 list-key "$key_type" --slot "$slot" --label "$old_label") ||
  { echo "p11sak could not list the keys of token $TOKEN_LABEL (slot $slot): is the user PIN right?" >&2; exit 1; }
if ! grep -qF "\"$old_label\"" <<<"$listed"; then
  echo "Token $TOKEN_LABEL holds no $key_type key labelled $old_label: nothing to remove."
  exit 0
fi
served=$(openssl s_client -connect "127.0.0.1:$PORT" -servername "$SERVER_NAME" </dev/null 2>/dev/null |
  openssl x509 -noout -pubkey 2>/dev/null || true)
[[ -n "$served" ]] || { echo "Not removed: no certificate from 127.0.0.1:$PORT to compare with (is httpd running?)." >&2
  exit 1; }
# The old public key, read as the token administrator with httpd's OpenSSL configuration less its PIN file (root's
# alone): a public key needs no login.
admin_conf=$(mktemp)
trap 'rm -f "$admin_conf"' EXIT
sed '/^[[:space:]]*pkcs11-module-token-pin[[:space:]]*=/d' "${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}" >"$admin_conf"
chmod 0644 "$admin_conf"
old_public=$(as_admin env OPENSSL_CONF="$admin_conf" openssl pkey -pubin -pubout \
  -in "pkcs11:token=$TOKEN_LABEL;object=$old_label;type=public" 2>/dev/null || true)
if [[ -n "$old_public" && "$served" == "$old_public" ]]; then
  echo "Not removed: the site on port $PORT still presents the certificate of $old_label (a graceful reload not" \
    "finished, or another site file)." >&2
  exit 1
fi

# Both halves carry the label (the key step made them so); --force: no question per object.
p11 remove-key "$key_type" --slot "$slot" --label "$old_label" --force
left=$(p11 list-key all --slot "$slot" --label "$old_label")
if grep -qF "\"$old_label\"" <<<"$left"; then
  echo "The token still lists $old_label after remove-key:" >&2
  echo "$left" >&2
  exit 1
fi
echo "removed key pair $old_label from token $TOKEN_LABEL (slot $slot)"
