#!/usr/bin/env bash
# A/B test on Linux on IBM Z: OpenSSL's CPACF and Crypto Express paths, on and off with OPENSSL_s390xcap.
# Run as the user httpd runs as (e.g. sudo -u apache) so /dev/z90crypt access is tested too; no root needed.
set -euo pipefail

[[ "$(uname -m)" == s390x ]] || { echo "This check is for Linux on IBM Z (s390x); this machine is $(uname -m)." >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is not installed: install the openssl package." >&2; exit 1; }

# A: the capability vector OpenSSL detected; B: everything masked (z900 = no CPACF functions, nocex = no CEX).
off="z900;nocex"
echo "A (default):  $(openssl version -a | sed -n 's/^CPUINFO: //p')"
echo "B ($off): $(OPENSSL_s390xcap="$off" openssl version -a | sed -n 's/^CPUINFO: //p')"

# speed KIND: the last throughput figure (largest block) of openssl speed for AES-256-GCM.
speed() { openssl speed -seconds 1 -bytes 16384 -evp aes-256-gcm 2>/dev/null | awk 'tolower($1) == "aes-256-gcm" {print $NF "B/s"}'; }
echo "AES-256-GCM, 16 KiB blocks: A $(speed) vs B $(OPENSSL_s390xcap="$off" speed)"

# requests: the sum of the REQUESTS column of lszcrypt (all online adapters and domains).
requests() { lszcrypt 2>/dev/null | awk 'NR > 2 && $4 == "online" {n += $5} END {print n + 0}'; }
if [[ ! -e /dev/z90crypt ]]; then
    echo "CEX: no /dev/z90crypt (zcrypt not loaded or no adapter): OpenSSL's RSA runs in software"
elif ! command -v lszcrypt >/dev/null; then
    echo "CEX: lszcrypt is missing, so the adapter's request counters cannot be read: install s390-tools" >&2
    exit 1
elif [[ ! -r /dev/z90crypt || ! -w /dev/z90crypt ]]; then
    echo "CEX: /dev/z90crypt exists but $(id -un) cannot open it read-write: RSA falls back to software"
else
    for mode in A B; do
        cap=""; [[ $mode == B ]] && cap="nocex"
        before=$(requests)
        OPENSSL_s390xcap="$cap" openssl speed -seconds 2 rsa2048 >/dev/null 2>&1
        echo "CEX: $mode: $(( $(requests) - before )) adapter requests during 2 s of RSA-2048 signing"
    done
fi
