#!/usr/bin/env bash
# Renew an Apache token site's certificate over ACME (RFC 8555) with a new key made in the token: the key never
# leaves the token, because the ACME client gets only a certificate request (certbot certonly --csr) and answers the
# CA's HTTP-01 challenge from the running site's document root. Run as root. It reuses the runbook's own steps: the
# Apache page's key step (a new key in the token and its request, as TOKEN_ADMIN), the day-two switch (graceful
# reload, refuses a certificate without the new key), the key and signing checks, and the removal of the old key.
# Each pair the site names (an RSA and an ECDSA certificate with their keys, or one) is renewed in turn, with a new
# key of the type and size of the key it replaces: RSA of the same size (at least 3072 bits, as 4096, on a FIPS host:
# libica in FIPS mode, which the kernel's fips_enabled or LIBICA_FIPS_FLAG=1 turns on, refuses smaller RSA keys; an
# OpenSSL configuration that asks for the FIPS provider counts too), ECDSA on P-256.
# Root runs this file and its sibling steps, and the token administrator runs the key check: keep them where the
# bundle's install step puts them (/opt/zrunbook/snippets), root's alone to change and readable by all.
# Usage: renew-token-certificate-acme.sh [--when-due]
#   --when-due  renew a pair only once two thirds of its certificate's lifetime have passed (for a timer or cron).
#               Not ACME Renewal Information (RFC 9773): certbot 4.0 (Debian 13) has none, and certbot asks it only in
#               'certbot renew', which does not renew a certificate issued for --csr.
# Environment: ACME_SERVER (the CA's ACME directory URL, required); TOKEN_ADMIN (the token administrator, a member
# of pkcs11 other than root; default SUDO_USER); optional TOKEN_USER_PIN (default: the PIN file httpd's OpenSSL
# configuration names; when both exist they must agree), WEBROOT (/var/www/html: where the site serves
# http://SERVER_NAME/.well-known/acme-challenge/ from), CA_FILE (the trust anchors the issued chain must verify
# against, default /etc/ssl/certs/ca-certificates.crt), ACME_CA_BUNDLE (the CA bundle certbot trusts for the ACME
# server itself, when it is a private one), ACME_EMAIL (else the account is registered without one), TOKEN_LABEL
# (IBMICATOK), SERVER_NAME (www.example.com), SITE_CONF, OPENSSL_PKCS11_CONF (the file /etc/apache2/envvars names
# in OPENSSL_CONF, else /etc/ssl/openssl-pkcs11.conf), HTTPD_USER (www-data), PORT (443),
# TEXTFILE_DIR (node_exporter's textfile directory, /var/lib/prometheus/node-exporter; set it empty for no metrics).
# Every run that gets past its lock writes zrunbook-renewal-SERVER_NAME.prom there, replaced in one mv:
#   zrunbook_certificate_renewal_last_run_timestamp_seconds      when this run ended
#   zrunbook_certificate_renewal_last_exit_status                its exit status (below); the monitoring page's
#                                                                CertificateRenewalFailing alert fires on a non-zero one
#   zrunbook_certificate_renewal_last_renewed_timestamp_seconds  when a run last installed a new certificate
#   zrunbook_certificate_renewal_due_timestamp_seconds           when the site's earliest due certificate is due:
#                                                                two thirds of its lifetime, from notBefore and notAfter
# Exit status: 0 renewed (or not due yet), 1 not renewed (the old certificate still serves), 3 switched, but a check
# after the switch failed or the switch stopped after it changed the site (both keys are kept, and the step writes
# /var/lib/zrunbook/renewal-held-SERVER_NAME with why: every later run stops with 3 until a person removes that file),
# 4 not logged in: the token's flags or the PIN file say the PIN is doubtful.
set -euo pipefail

die() { echo "renew: $*" >&2; exit 1; }
when_due=no
case "${1:-}" in
  "") ;;
  --when-due) when_due=yes ;;
  *) echo "Usage: $0 [--when-due]" >&2; exit 2 ;;
esac
# The bundle's real path, resolved once: the steps are checked and run by that path, so no link another user can
# change stands between the check and the run.
here=$(cd -P "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
snippets=$(dirname "$(dirname "$here")")
self="$here/$(basename "${BASH_SOURCE[0]}")"
KEY_STEP="$snippets/ihs/apache/create-token-key-and-csr.sh"
SWITCH="$snippets/daytwo/switch-token-certificate.sh"
REMOVE="$snippets/daytwo/remove-old-token-key.sh"
CHECK_KEY="$snippets/crypto/verify/check-key-in-token.sh"
CHECK_SIGNS="$snippets/crypto/verify/check-token-signs.sh"
: "${ACME_SERVER:?set ACME_SERVER to the ACME directory URL of your CA, https://.../directory}"
TOKEN_LABEL="${TOKEN_LABEL:-IBMICATOK}" SERVER_NAME="${SERVER_NAME:-www.example.com}" PORT="${PORT:-443}"
WEBROOT="${WEBROOT:-/var/www/html}" CA_FILE="${CA_FILE:-/etc/ssl/certs/ca-certificates.crt}"
SITE_CONF="${SITE_CONF:-/etc/apache2/sites-available/tls.conf}" HTTPD_USER="${HTTPD_USER:-www-data}"
# httpd's own OpenSSL configuration: the one the IHS chapter's step names in envvars (the FIPS file after the switch)
if [[ -z ${OPENSSL_PKCS11_CONF:-} && -r /etc/apache2/envvars ]]; then
  OPENSSL_PKCS11_CONF=$(sed -n -E 's/^[[:space:]]*export OPENSSL_CONF=["]?([^"]*)["]?[[:space:]]*$/\1/p' /etc/apache2/envvars | tail -n 1)
fi
OPENSSL_PKCS11_CONF="${OPENSSL_PKCS11_CONF:-/etc/ssl/openssl-pkcs11.conf}"
TEXTFILE_DIR="${TEXTFILE_DIR-/var/lib/prometheus/node-exporter}"

[[ $EUID -eq 0 ]] || die "run this as root: it writes under /etc/ssl and reloads httpd."
[[ -z $TEXTFILE_DIR || (-d $TEXTFILE_DIR && -w $TEXTFILE_DIR) ]] || die "$TEXTFILE_DIR is not a writable directory:" \
  "install prometheus-node-exporter, set TEXTFILE_DIR to its textfile directory, or set TEXTFILE_DIR= (empty) to" \
  "renew without the metrics the monitoring page alerts on."

# One renewal at a time: a timer run and a hand run must not make two keys.
# The lock is in /run, root's alone (/run/lock is writable by all on many hosts: another user could hold or plant it);
# opened to append, so it truncates nothing. The bundle's install step takes it too.
exec 9>>/run/renew-token-certificate.lock
flock -n 9 || die "another renewal, or the bundle's install step, is running (it holds /run/renew-token-certificate.lock)."

# The metrics, written when the run ends, whatever its end: node_exporter's textfile collector reads them, and the
# monitoring page's alerts fire on a failed run. A temporary file in the same folder, moved into place, so the
# collector never reads half a file.
due_of() {  # CERTIFICATE: when two thirds of its lifetime have passed (seconds since 1970)
  local start end
  start=$(date -d "$(openssl x509 -in "$1" -noout -startdate | cut -d= -f2)" +%s) || return 1
  end=$(date -d "$(openssl x509 -in "$1" -noout -enddate | cut -d= -f2)" +%s) || return 1
  echo $((start + (end - start) * 2 / 3))
}
# The site's pairs, in its order: each SSLCertificateFile line, and the token key its SSLCertificateKeyFile names.
site_certificates() { sed -n -E 's/^[[:space:]]*SSLCertificateFile[[:space:]]+"?([^"[:space:]]+)"?.*/\1/p' "$SITE_CONF"; }
site_key_files() { sed -n -E 's/^[[:space:]]*SSLCertificateKeyFile[[:space:]]+"?([^"[:space:]]+)"?.*/\1/p' "$SITE_CONF"; }
renewed_at=""
write_metrics() {  # EXIT_STATUS
  [[ -n $TEXTFILE_DIR ]] || return 0
  local file="$TEXTFILE_DIR/zrunbook-renewal-${SERVER_NAME//[^A-Za-z0-9.-]/_}.prom" tmp due="" cert name value
  local label="{server_name=\"$SERVER_NAME\"}"
  if [[ -z $renewed_at && -r $file ]]; then
    renewed_at=$(sed -n 's/^zrunbook_certificate_renewal_last_renewed_timestamp_seconds{.*} \([0-9]*\)$/\1/p' "$file")
  fi
  # the earliest of the site's certificates: a two-key site is due when either of its pairs is
  while read -r cert; do
    if [[ -r $cert ]] && value=$(due_of "$cert" 2>/dev/null) && [[ -z $due || $value -lt $due ]]; then due=$value; fi
  done < <(site_certificates 2>/dev/null)
  # each entry: NAME:VALUE:HELP (the help has no colon); an empty value gives no metric
  local text=""
  for metric in "last_run_timestamp_seconds:$(date +%s):When the last renewal run ended." \
                "last_exit_status:$1:The last run's exit status (0 renewed or not due, 1 not renewed, 3 switched but a check failed, 4 PIN doubtful)." \
                "last_renewed_timestamp_seconds:$renewed_at:When a run last installed a new certificate." \
                "due_timestamp_seconds:$due:When two thirds of the lifetime of the site's earliest due certificate have passed."; do
    name=zrunbook_certificate_renewal_${metric%%:*} value=${metric#*:}
    value=${value%%:*}
    [[ -n $value ]] || continue
    text+=$(printf '# HELP %s %s\n# TYPE %s gauge\n%s%s %s' "$name" "${metric##*:}" "$name" "$name" "$label" "$value")$'\n'
  done
  # A new file under a random name (noclobber: bash refuses an existing regular file, or a link to one), made 0644 by
  # the umask, never
  # chmod-ed by name: the folder's parent may belong to node_exporter's user.
  tmp="$TEXTFILE_DIR/.zrunbook-renewal.prom.$$.$RANDOM$RANDOM"
  if ! (umask 022 && set -C && printf '%s' "$text" >"$tmp") 2>/dev/null || ! mv -f "$tmp" "$file"; then
    rm -f "$tmp"
    echo "renew: could not write $file." >&2
  fi
}
# From the key step on, a failure removes the new, unused key again; the old key and certificate are not touched.
new_label="" made=no switched=no old_label="" old_cert="" key_type=rsa new_cert=""
held="/var/lib/zrunbook/renewal-held-${SERVER_NAME//[^A-Za-z0-9.-]/_}" holding=no
on_exit() {
  local rc=$?
  # Any failure after a switch (the removal of the old key, say) leaves the site on the new key with both keys in
  # the token: that is status 3, which holds later runs, not 1, which a retry with nothing due would clear.
  if ((rc != 0 && rc != 3)) && [[ -n $new_label && $switched == yes ]]; then
    echo "renew: the site serves $new_cert with $new_label, but the step failed after the switch (above); $old_label" \
      "is kept." >&2
    rc=3
  fi
  rm -rf "${issued:-/nonexistent}"
  if ((rc != 0)) && [[ -n $new_label && $switched == no ]] && grep -qE "object=$new_label([;\"]|$)" "$SITE_CONF" 2>/dev/null; then
    # the switch stopped after it wrote the site file: the site names the new key now; both keys stay
    echo "renew: the switch stopped after it changed $SITE_CONF, which now names $new_label; both $old_label and" \
      "$new_label are kept. Check the site (apachectl -t), then the key check, before removing either." >&2
    rc=3
  elif ((rc != 0)) && [[ -n $new_label && $switched == no ]]; then
    # (a key step that failed may have made no key: then there is nothing to remove, and nothing to report)
    if ! TOKEN_USER_PIN=${TOKEN_USER_PIN:-} bash "$REMOVE" "$new_label" "$key_type" >/dev/null 2>&1 &&
       [[ $made == yes ]]; then
      echo "renew: remove the unused key $new_label by hand." >&2
    fi
    echo "renew: the site still serves $old_cert with key $old_label." >&2
  fi
  # A status 3 of this run holds every later one until a person looks: a later run would find nothing due, end with 0
  # and clear the alert, with both keys still in the token.
  if ((rc == 3)) && [[ $holding == no ]] && install -d -m 0700 /var/lib/zrunbook; then
    printf '%s: the site names %s (%s); %s was kept.\n' "$(date -u +%FT%TZ)" "${new_cert:-a new certificate}" \
      "$new_label" "$old_label" >"$held" || echo "renew: could not write $held." >&2
  fi
  write_metrics "$rc"
  exit "$rc"
}
trap on_exit EXIT
if [[ -e $held ]]; then
  holding=yes
  echo "renew: held by $held since $(head -n 1 "$held") Check the site and both keys (apachectl -t, the key check);" \
    "then switch back or remove the old key by hand, and remove $held to renew again." >&2
  exit 3
fi

for tool in certbot openssl pkcsconf p11sak runuser flock stat; do
  command -v "$tool" >/dev/null || die "$tool is missing: install certbot, openssl, openCryptoki and util-linux" \
    "(from cron, give the cron file a PATH with /usr/sbin and /sbin, as the runbook's cron file does)."
done
for step in "$KEY_STEP" "$SWITCH" "$REMOVE" "$CHECK_KEY" "$CHECK_SIGNS"; do
  [[ -f $step ]] || die "the runbook's step $step is missing: keep the snippets' folders as the bundle has them."
done
# Root runs this file and its sibling steps: a file or folder on their path that someone else can change is a way to
# root at the next timer run. A folder writable by others is allowed only when it is root's and sticky (/tmp): no
# one else can rename root's entries in it.
not_roots_alone() {  # PATH: the first file or folder on PATH's real path, from the file up, that is not root's alone
  local p owner mode
  p=$(readlink -f -- "$1") || { echo "$1"; return 0; }
  while :; do
    read -r owner mode < <(stat -c '%u %a' -- "$p") || { echo "$p"; return 0; }
    if ((owner != 0)) || { ((8#$mode & 8#022)) && ! { [[ -d $p ]] && ((8#$mode & 8#1000)); }; }; then
      echo "$p"
      return 0
    fi
    [[ $p == / ]] && return 0
    p=$(dirname -- "$p")
  done
}
for step in "$self" "$KEY_STEP" "$SWITCH" "$REMOVE" "$CHECK_KEY" "$CHECK_SIGNS"; do
  open=$(not_roots_alone "$step")
  [[ -z $open ]] || die "$open can be changed by someone other than root, and root runs $step from there:" \
    "install the snippet bundle with its install step (it makes /opt/zrunbook/snippets root's alone). Nothing was changed."
done
[[ -d $WEBROOT ]] || die "the document root $WEBROOT does not exist: set WEBROOT to the folder the site serves on port 80."
[[ -r $CA_FILE ]] || die "cannot read CA_FILE $CA_FILE, the trust anchors the new chain must verify against."
[[ -f $SITE_CONF ]] || die "the site file $SITE_CONF does not exist: set SITE_CONF to your TLS site."
id "$HTTPD_USER" >/dev/null 2>&1 || die "there is no user $HTTPD_USER: set HTTPD_USER to the user httpd runs as."
TOKEN_ADMIN="${TOKEN_ADMIN:-${SUDO_USER:-}}"
[[ -n $TOKEN_ADMIN && $TOKEN_ADMIN != root ]] || die "set TOKEN_ADMIN to the token administrator, a member of" \
  "pkcs11 other than root: the token tools run as that user, never as root."
id -nG "$TOKEN_ADMIN" 2>/dev/null | tr ' ' '\n' | grep -qx pkcs11 || die "$TOKEN_ADMIN is not a member of the group" \
  "pkcs11 (or no such user): add the token administrator with the crypto chapter's step."
# The token administrator runs the key check after the switch (with the PIN in its environment, which only that user
# and root can read): a copy it cannot read (in root's home) would fail only then.
runuser -u "$TOKEN_ADMIN" -- test -r "$CHECK_KEY" || die "$TOKEN_ADMIN cannot read $CHECK_KEY, which this step runs" \
  "as that user after the switch: keep the snippets where all may read them, as the bundle's install step does" \
  "(/opt/zrunbook/snippets). Nothing was changed."
export TOKEN_ADMIN TOKEN_LABEL SERVER_NAME PORT SITE_CONF OPENSSL_PKCS11_CONF

# The site's pairs, each a certificate and the token key after it: one, or an RSA and an ECDSA pair.
mapfile -t certs < <(site_certificates)
mapfile -t keys < <(site_key_files)
((${#certs[@]} > 0 && ${#certs[@]} == ${#keys[@]})) || die "$SITE_CONF has ${#certs[@]} SSLCertificateFile and" \
  "${#keys[@]} SSLCertificateKeyFile lines: give each certificate its key line."
# A FIPS site: the kernel's FIPS mode, or httpd's OpenSSL configuration asks for the FIPS provider's algorithms.
fips=no
if [[ $(cat /proc/sys/crypto/fips_enabled 2>/dev/null) == 1 || ${LIBICA_FIPS_FLAG:-} == 1 ]] ||
   grep -Eq '^[[:space:]]*default_properties[[:space:]]*=.*fips[[:space:]]*=[[:space:]]*yes' "$OPENSSL_PKCS11_CONF" 2>/dev/null; then
  fips=yes
fi
# key_like CERTIFICATE: the key step's arguments for a key like the certificate's (RSA of its size, at least 4096
# when it is under 3072 on a FIPS site; ECDSA on P-256, the one curve the key step makes)
key_like() {
  local text bits
  text=$(openssl x509 -in "$1" -noout -text 2>/dev/null) || return 1
  case $text in
    *"Public Key Algorithm: rsaEncryption"*)
      bits=$(sed -n 's/^[[:space:]]*Public-Key: (\([0-9]*\) bit).*/\1/p' <<<"$text" | head -n 1)
      [[ $bits =~ ^(2048|3072|4096)$ ]] || return 1
      if [[ $fips == yes ]] && ((bits < 3072)); then bits=4096; fi
      echo "rsa $bits" ;;
    *"Public Key Algorithm: id-ecPublicKey"*)
      grep -qE 'NIST CURVE: P-256|ASN1 OID: prime256v1' <<<"$text" || return 1
      echo ec ;;
    *) return 1 ;;
  esac
}
labels=() specs=()
for i in "${!certs[@]}"; do
  [[ ${keys[$i]} =~ ^pkcs11:[^\"]*object=([^\;\"]+) ]] || die "the key of ${certs[$i]} is not in a token" \
    "(${keys[$i]}): this step renews a site whose keys are in the token."
  labels+=("${BASH_REMATCH[1]}")
  [[ -r ${certs[$i]} ]] || die "cannot read the site's certificate ${certs[$i]}."
  spec=$(key_like "${certs[$i]}") || die "${certs[$i]} has a key the key step cannot make again (it makes RSA of 2048," \
    "3072 or 4096 bits and ECDSA on P-256): renew it by hand. Nothing was changed."
  specs+=("$spec")
done
# The switch replaces the pair of the new key's type: two pairs of one type (two vhosts in the file, or RSA 2048
# beside 4096) would be refused only after the CA issued, and every retry would order again.
if (($(printf '%s\n' "${specs[@]}" | cut -d' ' -f1 | sort | uniq -d | wc -l) > 0)); then
  die "$SITE_CONF names two certificates of one key type (${specs[*]}): this step renews one RSA and one ECDSA" \
    "pair of one site. Renew such a file by hand. Nothing was changed."
fi

# When due: two thirds of the lifetime of each certificate the site names (a 47-day certificate after 31 days).
due_pairs=()
for i in "${!certs[@]}"; do
  if [[ $when_due == yes ]]; then
    due=$(due_of "${certs[$i]}") || die "cannot read the dates of ${certs[$i]}."
    end=$(date -d "$(openssl x509 -in "${certs[$i]}" -noout -enddate | cut -d= -f2)" +%s)
    if (($(date +%s) < due)); then
      echo "renew: ${certs[$i]} is not due yet: renewal from $(date -u -d "@$due" +%FT%TZ), it expires" \
        "$(date -u -d "@$end" +%FT%TZ)."
      continue
    fi
  fi
  due_pairs+=("$i")
done
((${#due_pairs[@]} > 0)) || exit 0

# Before any login: the token's flags, read without a PIN. A wrong PIN counted since the last good login
# (USER_PIN_COUNT_LOW), one try left (USER_PIN_FINAL_TRY) or a locked PIN stops the renewal here, so a stale PIN
# cannot walk the token toward a lock one timer run at a time.
as_admin() { (cd / && runuser -u "$TOKEN_ADMIN" -- "$@"); }
slot=$({ as_admin pkcsconf -t 2>/dev/null || true; } | awk -v want="$TOKEN_LABEL" '
    /^Token #[0-9]+ Info:/ { slot = substr($2, 2) }
    /^[[:space:]]*Label:/  { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, "")
                             if ($0 == want) { print slot; exit } }')
[[ -n $slot ]] || die "no token labelled $TOKEN_LABEL in 'pkcsconf -t': is pkcsslotd running?"
flags=$(as_admin pkcsconf -t -c "$slot" 2>/dev/null | sed -n 's/^[[:space:]]*Flags:[[:space:]]*0x\([0-9A-Fa-f]*\).*/\1/p')
[[ -n $flags ]] || die "pkcsconf -t shows no flags for slot $slot."
if ((16#$flags & 0x70000)); then
  echo "renew: not logged in: token $TOKEN_LABEL shows flags 0x$flags (a wrong PIN was counted, or one try is" \
    "left, or the PIN is locked). Find who holds a wrong PIN, clear the count with clear-pin-count.sh, then renew." \
    "Nothing was changed." >&2
  exit 4
fi
# The PIN: the one httpd logs in with (its PIN file, root's alone), or TOKEN_USER_PIN when that agrees with it. It
# reaches the steps below in their environment, never on a command line, where every user could read it (ps).
pin_file=$(sed -n 's/^[[:space:]]*pkcs11-module-token-pin[[:space:]]*=[[:space:]]*file://p' "$OPENSSL_PKCS11_CONF" | tail -n 1)
if [[ -n $pin_file && -r $pin_file ]]; then
  file_pin=$(<"$pin_file")
  if [[ -n ${TOKEN_USER_PIN:-} && $TOKEN_USER_PIN != "$file_pin" ]]; then
    echo "renew: not logged in: TOKEN_USER_PIN is not the PIN in httpd's PIN file $pin_file, so one of them is" \
      "wrong. Correct it (rotate-token-pin.sh changes both together); nothing was changed." >&2
    exit 4
  fi
  TOKEN_USER_PIN=$file_pin
fi
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN, because the OpenSSL configuration of httpd names no PIN file this step can read}"
declare +x TOKEN_USER_PIN  # given to each step that needs it, not to every program this run starts

for i in "${due_pairs[@]}"; do
  old_cert=${certs[$i]} old_label=${labels[$i]} new_label="" made=no switched=no
  read -ra spec <<<"${specs[$i]}"
  key_type=${spec[0]}
  # 1. A new key in the token like the one it replaces, and its request: the Apache page's key step under a new
  # label. A new key per renewal, as on the day-two page: a key that leaked stops working at the next renewal.
  stamp=$(date -u +%Y%m%d%H%M%S)
  name=$SERVER_NAME
  [[ $key_type == ec ]] && name=$SERVER_NAME-ecdsa
  new_label="${old_label%-[0-9]*}-$stamp"
  csr="/etc/ssl/$name-$stamp.csr"
  new_cert="/etc/ssl/certs/$name-$stamp.crt"
  TOKEN_USER_PIN=$TOKEN_USER_PIN KEY_LABEL=$new_label CSR=$csr bash "$KEY_STEP" "${spec[@]}" >/dev/null 9>&- ||
    die "the key step could not make a new ${spec[*]} key in token $TOKEN_LABEL (above: why; a token that is full or" \
      "whose store is read-only stops here)."
  made=yes

  # 2. The CA signs the request after the site answers its HTTP-01 challenge from WEBROOT. certbot writes only
  # certificates here: with --csr it never makes or sees a private key of the site, nor the PIN.
  issued=$(mktemp -d)
  [[ -n ${ACME_CA_BUNDLE:-} ]] && export REQUESTS_CA_BUNDLE=$ACME_CA_BUNDLE
  account=(--register-unsafely-without-email)
  [[ -n ${ACME_EMAIL:-} ]] && account=(--email "$ACME_EMAIL")
  if ! log=$(certbot certonly --non-interactive --agree-tos "${account[@]}" \
        --server "$ACME_SERVER" --csr "$csr" --webroot --webroot-path "$WEBROOT" --cert-path "$issued/cert.pem" \
        --chain-path "$issued/chain.pem" --fullchain-path "$issued/fullchain.pem" 2>&1); then
    echo "$log" | grep -iE 'error|detail|fail|type:' | head -n 8 >&2 || true
    die "the CA did not issue a certificate for $SERVER_NAME (above: certbot's reason; its log is /var/log/letsencrypt)."
  fi

  # 3. The chain must verify against CA_FILE alone (the trust this site's clients use), for a server certificate
  # for SERVER_NAME.
  openssl verify -no-CApath -no-CAstore -CAfile "$CA_FILE" -untrusted "$issued/chain.pem" -purpose sslserver \
      -verify_hostname "$SERVER_NAME" "$issued/cert.pem" >/dev/null 2>&1 ||
    die "the chain the CA sent does not verify against $CA_FILE: install the CA's root where the site's clients" \
      "trust it first. Nothing was installed."
  install -m 0644 "$issued/fullchain.pem" "$new_cert"
  rm -rf "$issued"

  # 4. The switch: refuses a certificate without the new key's public key, replaces the pair of the same key type,
  # reloads gracefully, waits for it.
  # (9>&-: the lock stays with this run, not with an httpd the switch may start)
  bash "$SWITCH" "$new_cert" "$new_label" 9>&- || die "the switch refused or failed (above: why)."
  switched=yes

  # 5. The outcome, after every renewal: the served keys are in the token, the token signs the handshakes; then the
  # old key goes. A failed check stops before the removal (status 3), so the old key stays for switching back. The
  # key check runs as the token administrator and takes the PIN from its environment (runuser without --login passes
  # it on).
  if ! TOKEN_USER_PIN=$TOKEN_USER_PIN runuser -u "$TOKEN_ADMIN" -- bash "$CHECK_KEY" "localhost:$PORT" 9>&-; then
    echo "renew: the site serves $new_cert, but its key check failed (above); the old key $old_label is kept." >&2
    exit 3
  fi
  signs=0
  SERVICE_USER=$HTTPD_USER TOKEN_LABEL=$TOKEN_LABEL CA_FILE=$CA_FILE SERVER_NAME=$SERVER_NAME \
      bash "$CHECK_SIGNS" "localhost:$PORT" 9>&- || signs=$?
  if ((signs != 0 && signs != 5)); then
    echo "renew: the site serves $new_cert, but the token signing check failed (above); the old key $old_label is" \
      "kept." >&2
    exit 3
  fi
  TOKEN_USER_PIN=$TOKEN_USER_PIN bash "$REMOVE" "$old_label" "$key_type"
  renewed_at=$(date +%s)
  echo "renew: $SERVER_NAME serves $new_cert (expires $(openssl x509 -in "$new_cert" -noout -enddate | cut -d= -f2))," \
    "key $new_label (${spec[*]}) in token $TOKEN_LABEL; $old_label removed."
  new_label=""
done
