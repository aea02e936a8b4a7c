#!/usr/bin/env bash
# Proves that a TLS server offers nothing older than TLS 1.2, and does offer TLS 1.2 or 1.3. For TLS 1.0 and
# 1.1 it starts a handshake that offers only that version, with every cipher this OpenSSL has at security level
# 0, and fails when the server answers with a ServerHello: the server has that version switched on, even when
# the handshake then breaks off (a server whose token key cannot sign the old handshake still says yes to the
# version, and a client it can serve gets it). Run as any user:
#   bash check-tls-protocols.sh HOST:PORT
# SERVER_NAME (optional): the name to ask for (SNI) when HOST is not the certificate's name. SIGALGS (optional):
# the signature schemes the TLS 1.2 and 1.3 handshakes offer (the first list, as for the key check), so that they
# do not make the token fail a hash it cannot do (the runbook's s390x host under qemu has no SHA-256 in the ICA
# token; a failed signature there left an httpd worker answering later clients with a reset).
# Needs openssl 3 built with TLS 1.0 and 1.1 (Debian's, Ubuntu's, RHEL's and SLES's are).
set -euo pipefail

die() { echo "check-tls-protocols: $*" >&2; exit 1; }
[[ $# -eq 1 && $1 == *:* ]] || die "usage: $0 HOST:PORT"
target=$1
command -v openssl >/dev/null || die "openssl is missing: install openssl."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
help=$(openssl s_client -help 2>&1 || true)
[[ $help == *"-tls1_1 "* && $help == *"-tls1 "* ]] ||
  die "this openssl cannot offer TLS 1.0 and 1.1 (built without them), so it cannot tell whether the server offers them."

# What the server answers to a client that offers only one version: "hello" (a ServerHello came), or "no".
answer() {
  local said
  said=$(timeout 20 openssl s_client -connect "$target" -servername "${SERVER_NAME:-${target%:*}}" "$@" -msg \
         </dev/null 2>&1 || true)
  if grep -qE '^<<< .*ServerHello' <<<"$said"; then echo hello; else echo no; fi
}

old=()
[[ $(answer -tls1 -cipher 'ALL:@SECLEVEL=0') == hello ]] && old+=("TLS 1.0")
[[ $(answer -tls1_1 -cipher 'ALL:@SECLEVEL=0') == hello ]] && old+=("TLS 1.1")
read -r -a lists <<<"${SIGALGS:-}"
sig=()
[[ -z ${lists[0]:-} ]] || sig=(-sigalgs "${lists[0]}")
current=()
[[ $(answer -tls1_2 "${sig[@]}") == hello ]] && current+=("TLS 1.2")
[[ $(answer -tls1_3 "${sig[@]}") == hello ]] && current+=("TLS 1.3")
fail=()
for version in "${old[@]}"; do
  fail+=("$target answers a handshake that offers only $version: switch it off (SSLProtocol -all +TLSv1.2 +TLSv1.3, or your server's equivalent)")
done
((${#current[@]})) || fail+=("$target answers neither TLS 1.2 nor TLS 1.3: is the server listening there with TLS?")
if ((${#fail[@]})); then
  printf 'check-tls-protocols: %s\n' "${fail[@]}" >&2
  exit 1
fi
offered=$(printf '%s and ' "${current[@]}")
echo "$target offers ${offered% and } and nothing older."
