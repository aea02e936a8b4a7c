#!/usr/bin/env bash
# Writes the token's health as Prometheus metrics for node_exporter's textfile collector:
#   bash zrunbook-textfile.sh [DIRECTORY]   (DIRECTORY: the collector's --collector.textfile.directory,
#                                            else TEXTFILE_DIR, else /var/lib/prometheus/node-exporter)
# Run it as root from cron or a systemd timer, every few minutes. It never logs in to a token: it reads the
# tokens' flags with pkcsconf -t, which needs no PIN, so it cannot cost a PIN try.
# What it exports (zrunbook.prom, replaced in one mv so the collector never reads half a file):
#   zrunbook_slotd_up                    1 when pkcsslotd answered pkcsconf -t within LOOK_SECONDS (default 10)
#   zrunbook_token_user_pin_count_low    per initialised token: 1 after a wrong user PIN (CKF_USER_PIN_COUNT_LOW)
#   zrunbook_token_user_pin_final_try    1 when the next wrong user PIN locks it (CKF_USER_PIN_FINAL_TRY); Apache's
#                                        pkcs11-provider then cancels every new login, the good PIN's too
#   zrunbook_token_user_pin_locked       1 when the user PIN is locked (CKF_USER_PIN_LOCKED)
#   zrunbook_opencryptoki_version_ok     1 when openCryptoki's library version is OCK_MIN_VERSION (default 3.18) or
#                                        later; the versions are labels of zrunbook_opencryptoki_info
#   zrunbook_certificate_not_after_timestamp_seconds   when the certificate expires: the one served at
#                                        CERT_CONNECT (host:port, name CERT_SERVERNAME), else the file CERT_FILE
#                                        (neither set: no certificate metric)
#   zrunbook_ap_card_online, zrunbook_ap_card_requests_total   per adapter: IBM Z only (the AP bus,
#                                        /sys/bus/ap); a host without it gets none of them, never a made-up zero
#   zrunbook_textfile_timestamp_seconds  when this run wrote the file (an alert finds a stale file with it)
set -euo pipefail

die() { echo "zrunbook-textfile: $*" >&2; exit 2; }
dir=${1:-${TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}}
min=${OCK_MIN_VERSION:-3.18}
wait_s=${LOOK_SECONDS:-10}
((EUID == 0)) || die "run as root: pkcsconf -t needs the pkcs11 group and the AP counters are root's to read."
[[ -d $dir && -w $dir ]] || die "$dir is not a writable directory: give the textfile collector's directory."
[[ $min =~ ^[0-9]+(\.[0-9]+)*$ ]] || die "OCK_MIN_VERSION=$min is not a version such as 3.18."
command -v pkcsconf >/dev/null || die "pkcsconf is missing: install opencryptoki."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
command -v openssl >/dev/null || die "openssl is missing: install openssl."
if [[ -n ${CERT_CONNECT:-} && -n ${CERT_FILE:-} ]]; then
  die "set CERT_CONNECT or CERT_FILE, not both."
fi
if [[ -n ${CERT_FILE:-} && ! -r ${CERT_FILE} ]]; then
  die "CERT_FILE=$CERT_FILE cannot be read."
fi

tmp=$(mktemp "$dir/.zrunbook.prom.XXXXXX")
trap 'rm -f "$tmp"' EXIT
metric() {  # NAME TYPE HELP: the header, once per name
  printf '# HELP %s %s\n# TYPE %s %s\n' "$1" "$3" "$1" "$2" >>"$tmp"
}
label() {  # a label value with \, " and newlines escaped as the text format wants
  local v=${1//\\/\\\\}
  v=${v//\"/\\\"}
  printf '%s' "${v//$'\n'/\\n}"
}

# The slot daemon and the tokens' flags, from one pkcsconf -t.
up=0
listing=$(timeout -k 2 "$wait_s" pkcsconf -t 2>/dev/null) && up=1 || listing=""
metric zrunbook_slotd_up gauge "1 when the openCryptoki slot daemon answered pkcsconf -t."
echo "zrunbook_slotd_up $up" >>"$tmp"
tokens=$(awk '/^[[:space:]]*Label:/ { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, ""); label = $0 }
              /^[[:space:]]*Flags:/ && label != "" { sub(/.*0x/, ""); sub(/[^0-9A-Fa-f].*/, ""); print $0, label; label = "" }' \
         <<<"$listing")
for flag in count_low:0x10000:"a wrong user PIN since the last good login" \
            final_try:0x20000:"the next wrong user PIN locks the token" \
            locked:0x40000:"the user PIN is locked"; do
  name=${flag%%:*} rest=${flag#*:}
  mask=${rest%%:*}
  metric "zrunbook_token_user_pin_$name" gauge "1 when ${rest#*:} (read from pkcsconf -t, no login)."
  while read -r flags token; do
    [[ -n $flags ]] || continue
    (( 16#$flags & 0x400 )) || continue  # not initialised: in no one's use
    echo "zrunbook_token_user_pin_$name{token=\"$(label "$token")\"} $(( (16#$flags & mask) != 0 ))" >>"$tmp"
  done <<<"$tokens"
done

# openCryptoki's library version against the minimum (pkcsconf -i: the library's own answer).
if ((up)); then
  version=$(timeout -k 2 "$wait_s" pkcsconf -i 2>/dev/null | sed -n 's/^[[:space:]]*Library Version:[[:space:]]*\([0-9.]*\).*/\1/p')
  if [[ -n $version ]]; then
    ok=0
    [[ $(printf '%s\n%s\n' "$min" "$version" | sort -V | head -1) == "$min" ]] && ok=1
    metric zrunbook_opencryptoki_info gauge "openCryptoki's library version and the minimum it is held to."
    echo "zrunbook_opencryptoki_info{version=\"$version\",minimum=\"$min\"} 1" >>"$tmp"
    metric zrunbook_opencryptoki_version_ok gauge "1 when openCryptoki's library version is the minimum or later."
    echo "zrunbook_opencryptoki_version_ok $ok" >>"$tmp"
  fi
fi

# The certificate's expiry: the one served (what clients get), else a file.
pem=""
if [[ -n ${CERT_CONNECT:-} ]]; then
  pem=$(timeout -k 2 "$wait_s" openssl s_client -connect "$CERT_CONNECT" -servername "${CERT_SERVERNAME:-${CERT_CONNECT%:*}}" \
        </dev/null 2>/dev/null | openssl x509 2>/dev/null) || pem=""
  cert_source=$CERT_CONNECT
elif [[ -n ${CERT_FILE:-} ]]; then
  pem=$(openssl x509 -in "$CERT_FILE" 2>/dev/null) || pem=""
  cert_source=$CERT_FILE
fi
if [[ -n ${cert_source:-} ]]; then
  metric zrunbook_certificate_read gauge "1 when the certificate could be read (served or from its file)."
  echo "zrunbook_certificate_read{source=\"$(label "$cert_source")\"} $([[ -n $pem ]] && echo 1 || echo 0)" >>"$tmp"
  if [[ -n $pem ]]; then
    end=$(openssl x509 -noout -enddate <<<"$pem")
    metric zrunbook_certificate_not_after_timestamp_seconds gauge "When the certificate expires (its notAfter)."
    echo "zrunbook_certificate_not_after_timestamp_seconds{source=\"$(label "$cert_source")\"} $(date -u -d "${end#notAfter=}" +%s)" >>"$tmp"
  fi
fi

# IBM Z only: the crypto adapters on the AP bus. No AP bus, no adapter metrics.
cards=(/sys/bus/ap/devices/card[0-9a-f][0-9a-f])
if [[ -e ${cards[0]} ]]; then
  metric zrunbook_ap_card_online gauge "1 when the crypto adapter is online (sysfs online)."
  for card in "${cards[@]}"; do
    echo "zrunbook_ap_card_online{card=\"${card##*/}\",type=\"$(label "$(cat "$card/type")")\"} $(cat "$card/online")" >>"$tmp"
  done
  metric zrunbook_ap_card_requests_total counter "Requests this Linux sent to the adapter (sysfs request_count)."
  for card in "${cards[@]}"; do
    echo "zrunbook_ap_card_requests_total{card=\"${card##*/}\"} $(cat "$card/request_count")" >>"$tmp"
  done
  adapters="$((${#cards[@]})) adapter(s)"
else
  adapters="no AP bus here, so no adapter metrics (they need IBM Z)"
fi

metric zrunbook_textfile_timestamp_seconds gauge "When zrunbook-textfile.sh wrote this file."
echo "zrunbook_textfile_timestamp_seconds $(date +%s)" >>"$tmp"
chmod 644 "$tmp"
mv -f "$tmp" "$dir/zrunbook.prom"
trap - EXIT
echo "wrote $dir/zrunbook.prom: slot daemon $([[ $up == 1 ]] && echo answering || echo NOT answering); $adapters"
