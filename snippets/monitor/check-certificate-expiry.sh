#!/usr/bin/env bash
# Proves that the certificate a site serves is not past three quarters of its own lifetime (the point at which the
# monitoring page's CertificateExpiresSoon fires; the renewal is due at two thirds), or with CERT_DAYS valid for that
# many more days, and that it is for the name clients
# ask for (SERVER_NAME, else HOST): the one clients get, read from one TLS connection with certificate and name
# checking, not a file that may not be the one loaded, and so is
# every CA certificate its chain rests on: the ones the server sends and the one in CA_FILE that issued the last of
# them (a CA that ends first stops every handshake as surely as the server's own). It changes nothing on the
# server. Run as any user:   bash check-certificate-expiry.sh HOST:PORT [SERVER_NAME]
# CA_FILE: the PEM file of the CA that signed the server certificate. SIGALGS (optional): the signature schemes to
# offer (the first list, as for the key check). CERT_DAYS (optional): a fixed number of days instead of the three
# quarters; each CA certificate of the chain must be valid for CERT_DAYS days (default 30). Exit status: 0 good,
# 1 it is past its point or expires sooner, or the connection failed (said which), 2 bad input.
set -euo pipefail

die() { echo "check-certificate-expiry: $*" >&2; exit "${2:-1}"; }
target="${1:-}"
[[ "$target" =~ ^[^:/]+:[0-9]+$ ]] || die "give the server as HOST:PORT, for example www.example.com:443." 2
name="${2:-${target%:*}}"
days="${CERT_DAYS:-30}"
[[ $days =~ ^[0-9]+$ ]] || die "CERT_DAYS=$days is not a number of days." 2
# A 47-day certificate has fewer than 30 days left from day 17, two weeks before its renewal is due (day 31): a fixed
# 30 days fails every healthy host for those two weeks. Without CERT_DAYS the server certificate is judged by its own
# lifetime, as the alert judges it.
: "${CA_FILE:?set CA_FILE to the PEM file of the CA that signed the server certificate}"
[[ -r "$CA_FILE" ]] || die "cannot read CA_FILE=$CA_FILE." 2
command -v openssl >/dev/null || die "openssl is missing: install openssl."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
# The name as clients check it: a DNS name against the certificate's names, an IP address against its addresses.
if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then check_name=(-verify_ip "$name"); else check_name=(-verify_hostname "$name"); fi
read -r -a lists <<<"${SIGALGS:-}"
sig=()
[[ -z ${lists[0]:-} ]] || sig=(-sigalgs "${lists[0]}")

said=$(timeout 30 openssl s_client -connect "$target" -servername "$name" -CAfile "$CA_FILE" -verify_return_error \
  "${check_name[@]}" -showcerts "${sig[@]}" </dev/null 2>&1 || true)
pem=$(openssl x509 2>/dev/null <<<"$said" || true)
# -showcerts prints the server's certificates before the check of them ends: only a verified handshake counts.
if grep -qE 'verify error:num=6[24]:' <<<"$said"; then  # 62 hostname mismatch, 64 IP address mismatch
  names=$(openssl x509 -noout -ext subjectAltName <<<"$pem" 2>/dev/null | tail -n +2 | sed 's/^ *//' || true)
  die "the certificate $target serves is not for $name: clients that ask for $name refuse it (its names: ${names:-none})."
fi
if [[ -z $pem ]] || ! grep -q '^Verify return code: 0 (ok)' <<<"$said"; then
  die "no certificate from $target: $(grep -m 1 -i 'error' <<<"$said" || echo 'the connection failed')."
fi
end=$(openssl x509 -noout -enddate <<<"$pem")
end=${end#notAfter=}
left=$(( ($(date -u -d "$end" +%s) - $(date -u +%s)) / 86400 ))
if [[ -n ${CERT_DAYS:-} ]]; then
  openssl x509 -noout -checkend $((days * 86400)) <<<"$pem" >/dev/null ||
    die "the certificate $target ($name) serves expires on $end, in $left day(s): less than $days; renew it."
else
  start=$(date -u -d "$(openssl x509 -noout -startdate <<<"$pem" | cut -d= -f2)" +%s)
  finish=$(date -u -d "$end" +%s)
  alert=$((start + (finish - start) * 3 / 4))
  since=$(date -u -d "@$alert" +%F)
  (($(date -u +%s) < alert)) || die "the certificate $target ($name) serves is past three quarters of its lifetime\
 (since $since); it expires on $end, in $left day(s), and its renewal was due at two thirds: renew it."
fi

# The CA certificates: those the server sends after its own, and the one in CA_FILE whose subject is the issuer of
# the last certificate sent (the trust anchor the handshake was checked with).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '/-----BEGIN CERTIFICATE-----/ { n++; keep = 1 } keep { print > (dir "/sent-" n ".pem") }
  /-----END CERTIFICATE-----/ { keep = 0 }' <<<"$said"
awk -v dir="$tmp" '/-----BEGIN CERTIFICATE-----/ { n++; keep = 1 } keep { print > (dir "/ca-" n ".pem") }
  /-----END CERTIFICATE-----/ { keep = 0 }' "$CA_FILE"
sent=$(find "$tmp" -name 'sent-*.pem' | sort -V)
last=$(tail -n 1 <<<"$sent")
anchor_subject=$(openssl x509 -noout -issuer -nameopt RFC2253 -in "$last" | sed 's/^issuer=//')
cas=$(tail -n +2 <<<"$sent")
for ca in "$tmp"/ca-*.pem; do
  [[ -e $ca ]] || continue
  [[ $(openssl x509 -noout -subject -nameopt RFC2253 -in "$ca" 2>/dev/null | sed 's/^subject=//') == "$anchor_subject" ]] &&
    cas+=$'\n'"$ca"
done
seen=() chain=''
while read -r ca; do
  [[ -n $ca ]] || continue
  fingerprint=$(openssl x509 -noout -fingerprint -sha256 -in "$ca" | sed 's/.*=//')
  [[ " ${seen[*]} " == *" $fingerprint "* ]] && continue
  seen+=("$fingerprint")
  subject=$(openssl x509 -noout -subject -nameopt RFC2253 -in "$ca" | sed 's/^subject=//')
  ca_end=$(openssl x509 -noout -enddate -in "$ca" | sed 's/^notAfter=//')
  ca_left=$(( ($(date -u -d "$ca_end" +%s) - $(date -u +%s)) / 86400 ))
  openssl x509 -noout -checkend $((days * 86400)) -in "$ca" >/dev/null ||
    die "the CA certificate '$subject' that $target's certificate rests on expires on $ca_end, in $ca_left day(s): less than $days; the CA must renew it, and every server it signed needs the new chain."
done <<<"$cas"
((${#seen[@]} == 0)) || chain=", and so are the ${#seen[@]} CA certificates of its chain for $days days or more"
echo "$target ($name): the certificate is valid until $end ($left days)${chain}"
