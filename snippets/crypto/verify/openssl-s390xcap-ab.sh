#!/usr/bin/env bash
# A/B test of OpenSSL's own CPACF path: SHA-512 with the machine's capabilities, then with CPACF SHA
# and the Crypto Express offload masked off through OPENSSL_s390xcap. Any user; IBM Z only.
set -euo pipefail
command -v openssl >/dev/null || { echo "openssl is missing: install the openssl package." >&2; exit 1; }

[[ "$(uname -m)" == s390x ]] || { echo "OPENSSL_s390xcap only means something on IBM Z (s390x)." >&2; exit 1; }
seconds="${SECONDS_PER_RUN:-3}"
off="kimd:0:0;klmd:0:0;nocex"

run() {
  echo "== $1"
  openssl version -a | grep '^CPUINFO:'
  openssl speed -evp sha512 -bytes 16384 -seconds "$seconds" 2>/dev/null | awk '$1 == "sha512" { print "sha512 16384-byte blocks:", $2 }'
}
(unset OPENSSL_s390xcap; run "A: what the machine offers")
(export OPENSSL_s390xcap="$off"; run "B: OPENSSL_s390xcap=$off")
