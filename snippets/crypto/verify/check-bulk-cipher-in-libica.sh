#!/usr/bin/env bash
# Proves that a TLS server's bulk cipher (AES) runs in libica on CPACF, as the 2013 study's IHS check did with
# icastats: downloads from the server over COUNT new TLS connections and requires the hardware column of
# libica's AES counters, summed over all users, to grow by at least COUNT. It passes only for a server that
# sends its records through libica: IHS or WebSEAL (GSKit) with symmetric offload through the ICA token, or
# OpenSSL with the ibmca engine. OpenSSL's own AES also runs on CPACF but is never counted by icastats
# (use openssl-s390xcap-ab.sh for that path). Run as root, with the server's certificate or its CA in CA_FILE:
#   CA_FILE=ca.pem bash check-bulk-cipher-in-libica.sh HOST:PORT [COUNT]
# Needs curl and icastats (libica's tools).
set -euo pipefail

die() { echo "check-bulk-cipher-in-libica: $*" >&2; exit 1; }
[[ $# -ge 1 && $1 == *:* ]] || die "usage: CA_FILE=PEM $0 HOST:PORT [COUNT]"
target=$1 count=${2:-5}
[[ $count =~ ^[1-9][0-9]*$ ]] || die "COUNT must be a positive number, not '$count'."
[[ -r ${CA_FILE:-} ]] || die "set CA_FILE to a PEM file with the server's certificate or its CA."
((EUID == 0)) || die "run as root: only root can read every user's libica counters (icastats -S)."
[[ $(uname -m) == s390x ]] || die "this is not IBM Z ($(uname -m)): libica and its counters exist only on s390x."
for tool in curl icastats; do
  command -v "$tool" >/dev/null || die "$tool is missing: install curl and libica's tools (libica-utils, libica-tools or libica)."
done

# "HARDWARE SOFTWARE": the AES operations (every mode, encrypt and decrypt) libica counted for all users,
# read from icastats' table (function | hardware | software; AES rows carry an ENC and a DEC count).
aes_ops() {
  local table
  table=$(icastats -S 2>&1) || die "icastats -S failed: $table"
  awk -F'|' '$1 ~ /^ *AES / { n = split($2, h, " +"); for (i = 1; i <= n; i++) hw += h[i]
                               n = split($3, s, " +"); for (i = 1; i <= n; i++) sw += s[i] }
             END { print hw + 0, sw + 0 }' <<<"$table"
}

read -r hw_before sw_before < <(aes_ops)
for i in $(seq "$count"); do
  curl -s -o /dev/null --max-time 20 --cacert "$CA_FILE" "https://$target/" || die "connection $i to $target failed: is the server up?"
done
read -r hw_after sw_after < <(aes_ops)
hw=$((hw_after - hw_before)) sw=$((sw_after - sw_before))
echo "$count TLS connections to $target: libica counted $hw AES operations in hardware, $sw in software."
((sw == 0)) || die "libica did AES in software: icainfo shows which AES modes this machine has in hardware."
((hw >= count)) || die "the bulk cipher did not go through libica. For IHS or WebSEAL: symmetric offload through the token is off (SSLAttributeSet 417 550, pkcs11-symmetric-cipher-support = no) or the cipher suite's mode is not one the token offers. For an OpenSSL server this is expected: its AES never passes libica."
