#!/usr/bin/env bash
# Proves that the certificate a site serves is valid for CERT_DAYS more days (default 30): the one clients get,
# read from one TLS connection with certificate checking, not a file that may not be the one loaded. It changes
# nothing on the server. Run as any user:   bash check-certificate-expiry.sh HOST:PORT [SERVER_NAME]
# CA_FILE: the PEM file of the CA that signed the server certificate. SIGALGS (optional): the signature schemes to
# offer (the first list, as for the key check). Exit status: 0 valid for CERT_DAYS days or more, 1 it expires
# sooner or the connection failed (said which), 2 bad input.
set -euo pipefail

die() { echo "check-certificate-expiry: $*" >&2; exit "${2:-1}"; }
target="${1:-}"
[[ "$target" =~ ^[^:/]+:[0-9]+$ ]] || die "give the server as HOST:PORT, for example www.example.com:443." 2
name="${2:-${target%:*}}"
days="${CERT_DAYS:-30}"
[[ $days =~ ^[0-9]+$ ]] || die "CERT_DAYS=$days is not a number of days." 2
: "${CA_FILE:?set CA_FILE to the PEM file of the CA that signed the server certificate}"
[[ -r "$CA_FILE" ]] || die "cannot read CA_FILE=$CA_FILE." 2
command -v openssl >/dev/null || die "openssl is missing: install openssl."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
read -r -a lists <<<"${SIGALGS:-}"
sig=()
[[ -z ${lists[0]:-} ]] || sig=(-sigalgs "${lists[0]}")

said=$(timeout 30 openssl s_client -connect "$target" -servername "$name" -CAfile "$CA_FILE" -verify_return_error \
  "${sig[@]}" </dev/null 2>&1 || true)
pem=$(openssl x509 2>/dev/null <<<"$said" || true)
[[ -n $pem ]] ||
  die "no certificate from $target: $(grep -m 1 -i 'error' <<<"$said" || echo 'the connection failed')."
end=$(openssl x509 -noout -enddate <<<"$pem")
end=${end#notAfter=}
left=$(( ($(date -u -d "$end" +%s) - $(date -u +%s)) / 86400 ))
openssl x509 -noout -checkend $((days * 86400)) <<<"$pem" >/dev/null ||
  die "the certificate $target ($name) serves expires on $end, in $left day(s): less than $days; renew it."
echo "$target ($name): the certificate is valid until $end ($left days)"
