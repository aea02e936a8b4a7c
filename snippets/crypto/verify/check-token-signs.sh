#!/usr/bin/env bash
# Proves that a TLS server's handshakes sign in the openCryptoki token: opens COUNT new TLS connections and
# requires openCryptoki's own usage counters (pkcsstats) to show at least COUNT more private-key operations by
# the server's user in the token's slot, counted per kind of key: RSA (PKCS #1, PSS, raw) and ECDSA. pkcsstats
# counts PKCS #11 operations, not adapter requests: where libica serves the token (model ICA) the check also
# reports libica's own counters (icastats -S, every user), hardware and software apart, because libica computes
# RSA in software when no Crypto Express adapter answers, and says nothing. REQUIRE_HARDWARE=yes makes such
# software operations a failure. Run as root, with the server's certificate or its CA in CA_FILE:
#   SERVICE_USER=wasadmin SLOT=1 CA_FILE=server.pem bash check-token-signs.sh HOST:PORT [COUNT]
# (TOKEN_LABEL=<label> instead of SLOT finds the slot by the token's label.)
# SERVER_NAME (optional): the name in the server's certificate when HOST is not that name (localhost on the
# server itself): curl then asks for https://SERVER_NAME:PORT/ and connects to HOST:PORT. SIGALGS (optional):
# the signature schemes curl offers, as OpenSSL lists them, one list per certificate the server has, separated
# by spaces (needs curl 8.14 or later). Each list gets COUNT connections, and the counter of its kind of key
# (ECDSA for a list that names ecdsa, else RSA) must grow: a site with an RSA and an ECDSA key is checked with
# SIGALGS="rsa_pss_rsae_sha256 ECDSA+SHA256", so a key of either kind in a file fails.
# Root runs no openCryptoki tool here: loading openCryptoki opens and re-owns the token files, through a link a
# pkcs11 member planted when root does it (CVE-2026-23893, before 3.27 without the fix). pkcsconf runs as zrprobe
# (group pkcs11 only), and pkcsstats as SERVICE_USER, who may read its own counters; root is needed for runuser and
# for icastats -S (every user's libica counters).
# Needs curl, pkcsconf and pkcsstats (openCryptoki 3.18 or later), setpriv and runuser (util-linux), and
# icastats (libica's tools) for the ICA
# token. Exit status: 0 the token signed, 1 it did not (or, with REQUIRE_HARDWARE=yes, libica signed in software) or the
# check could not run, 5 cannot tell: openCryptoki's statistics are switched off (statistics (off) in
# opencryptoki.conf), so no counter can show where the server signs.
set -euo pipefail

die() { echo "check-token-signs: $*" >&2; exit 1; }
[[ $# -ge 1 && $1 == *:* ]] || die "usage: SERVICE_USER=USER SLOT=N CA_FILE=PEM $0 HOST:PORT [COUNT]"
target=$1 count=${2:-5}
[[ $count =~ ^[1-9][0-9]*$ ]] || die "COUNT must be a positive number, not '$count'."
[[ -n ${SERVICE_USER:-} ]] || die "set SERVICE_USER to the user the server runs as."
[[ -r ${CA_FILE:-} ]] || die "set CA_FILE to a PEM file with the server's certificate or its CA."
((EUID == 0)) || die "run as root: it reads the server user's counters as that user (runuser) and libica's of every user."
for tool in curl pkcsconf pkcsstats; do
  command -v "$tool" >/dev/null || die "$tool is missing: install curl and openCryptoki 3.18 or later."
done
for tool in setpriv runuser; do
  command -v "$tool" >/dev/null || die "$tool is missing: install util-linux."
done
id "$SERVICE_USER" >/dev/null 2>&1 || die "there is no user $SERVICE_USER on this host."
getent group pkcs11 | cut -d: -f4 | tr , '\n' | grep -qx zrprobe ||
  die "there is no user zrprobe listed in group pkcs11, as whom the token tools run: the slot daemon's step" \
    "(start-pkcsslotd.sh) makes it, or: useradd --system --no-create-home --shell /usr/sbin/nologin --groups pkcs11 zrprobe"
# Token tools never as root: the tokens' labels and models as zrprobe (group pkcs11 only) (a member's rights).
as_group() { setpriv --reuid=zrprobe --regid=pkcs11 --clear-groups -- "$@"; }
# SLOT, or the token's label in TOKEN_LABEL: the slot whose token has that label.
[[ -n ${SLOT:-} || -z ${TOKEN_LABEL:-} ]] ||
  SLOT=$(as_group pkcsconf -t 2>/dev/null | awk -v l="$TOKEN_LABEL" '/^Token #/ { s = substr($2, 2) } $1 == "Label:" && $2 == l { print s; exit }')
[[ -n ${SLOT:-} ]] || die "set SLOT to the token's slot number (pkcsconf -s lists them), or TOKEN_LABEL to its label."
model=$(as_group pkcsconf -t -c "$SLOT" 2>/dev/null | sed -n 's/^[[:space:]]*Model:[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*$/\1/p' | head -n 1 || true)
[[ -n $model ]] || die "pkcsconf -t -c $SLOT shows no token in slot $SLOT: is pkcsslotd running?"
libica=no
if [[ $model == *ICA* ]]; then
  command -v icastats >/dev/null ||
    die "icastats is missing: the token in slot $SLOT is the ICA token; install libica's tools (libica-utils, libica-tools or libica) to see whether libica used the adapter."
  libica=yes
fi
conf=${OPENCRYPTOKI_CONF:-/etc/opencryptoki/opencryptoki.conf}
if [[ -r $conf ]] && grep -qE '^[[:space:]]*statistics[[:space:]]*\([[:space:]]*off' "$conf"; then
  echo "check-token-signs: cannot tell: openCryptoki's statistics are switched off in $conf (statistics (off)), so no counter shows whether the token signs. Switch them on (remove the line, restart the token's users) or prove it another way (icastats, lszcrypt -V on IBM Z)." >&2
  exit 5
fi

# The server user's private-key operations in the slot by kind: "RSA ECDSA" (signatures and raw RSA, every
# key strength and hash). pkcsstats loads openCryptoki too, so it runs as the server's user, whose own counters
# these are.
ops() {
  local out
  out=$(runuser -u "$SERVICE_USER" -- pkcsstats -U "$SERVICE_USER" -s "$SLOT" 2>&1) || {
    # No statistics yet for a user who has not used openCryptoki since the counters were created.
    [[ $out == *"No statistics are available"* ]] && { echo 0 0; return; }
    die "pkcsstats failed: $out"
  }
  awk -F'|' 'function add(n) { k = split($2, c, " +"); for (i = 1; i <= k; i++) n += c[i]; return n }
             $1 ~ /^CKM_(SHA[0-9_]*_)?RSA_(PKCS|PKCS_PSS|X_509) *$/ { rsa = add(rsa) }
             $1 ~ /^CKM_ECDSA(_SHA[0-9_]*)? *$/ { ec = add(ec) }
             END { print rsa + 0, ec + 0 }' <<<"$out"
}

# The private-key operations libica counted, every user's together: "HARDWARE SOFTWARE", RSA (modular
# exponentiation and CRT) and ECDSA signatures, from icastats' table (function | hardware | software). Every user's,
# because libica keeps the counters of the user a process had when it loaded libica: httpd's parent loads it as
# root, before its workers become the server's user.
ica_ops() {
  local table
  table=$(icastats -S 2>&1) || die "icastats -S failed: $table"
  awk -F'|' 'function add(f, n) { k = split(f, c, " +"); for (i = 1; i <= k; i++) n += c[i]; return n }
             $1 ~ /^ *(RSA-ME|RSA-CRT|ECDSA Sign) *$/ { hw = add($2, hw); sw = add($3, sw) }
             END { print hw + 0, sw + 0 }' <<<"$table"
}

url="https://$target/" connect=()
if [[ -n ${SERVER_NAME:-} ]]; then
  port=${target##*:}
  url="https://$SERVER_NAME:$port/" connect=(--connect-to "$SERVER_NAME:$port:$target")
fi
read -r -a lists <<<"${SIGALGS:-}"
((${#lists[@]})) || lists=("")
fail=() said=()
for offer in "${lists[@]}"; do
  sigalgs=() kind=any
  if [[ -n $offer ]]; then
    sigalgs=(--sigalgs "$offer")
    shopt -s nocasematch
    if [[ $offer == *ecdsa* ]]; then kind=ECDSA; elif [[ $offer == *rsa* ]]; then kind=RSA; fi
    shopt -u nocasematch
  fi
  read -r rsa_before ec_before < <(ops)
  [[ $libica == no ]] || read -r hw_before sw_before < <(ica_ops)
  for i in $(seq "$count"); do
    out=$(curl -sS -o /dev/null --max-time 20 --cacert "$CA_FILE" "${connect[@]}" "${sigalgs[@]}" "$url" 2>&1) ||
      die "connection $i to $target ($url${offer:+, offering $offer}) failed: ${out:-curl failed}. Is the server up, and is SERVER_NAME the name in its certificate?"
  done
  read -r rsa_after ec_after < <(ops)
  rsa=$((rsa_after - rsa_before)) ec=$((ec_after - ec_before))
  case $kind in RSA) grown=$rsa ;; ECDSA) grown=$ec ;; *) grown=$((rsa + ec)) ;; esac
  what="${offer:-the default certificate}: $count new TLS connections, $rsa RSA and $ec ECDSA operations in slot $SLOT (token model $model) by $SERVICE_USER"
  if [[ $libica == yes ]]; then
    read -r hw_after sw_after < <(ica_ops)
    hw=$((hw_after - hw_before)) sw=$((sw_after - sw_before))
    what+="; libica (icastats -S): $hw in hardware, $sw in software"
  fi
  if ((grown < count)); then
    fail+=("$what: the handshakes signed outside the token (a software key, or a provider that bypasses it).")
  elif [[ $libica == yes ]] && ((sw > 0)) && [[ ${REQUIRE_HARDWARE:-no} == yes ]]; then
    fail+=("$what: libica signed in software, so no Crypto Express adapter served these requests (lszcrypt shows which adapters are online).")
  else
    said+=("$what")
    if [[ $libica == yes ]] && ((sw > 0)); then
      echo "check-token-signs: libica computed $sw of them in software: no Crypto Express adapter served them (lszcrypt; REQUIRE_HARDWARE=yes makes this a failure)." >&2
    fi
  fi
done
if ((${#fail[@]})); then
  printf 'check-token-signs: %s\n' "${fail[@]}" >&2
  exit 1
fi
printf '%s\n' "${said[@]}"
echo "the token signed each handshake (${#lists[@]} certificate(s))."
