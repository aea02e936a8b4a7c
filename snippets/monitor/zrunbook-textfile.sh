#!/usr/bin/env bash
# Writes the token's health as Prometheus metrics for node_exporter's textfile collector:
#   bash zrunbook-textfile.sh [DIRECTORY]   (DIRECTORY: the collector's --collector.textfile.directory,
#                                            else TEXTFILE_DIR, else /var/lib/prometheus/node-exporter)
# Run it as root from cron or a systemd timer, every few minutes. It never logs in to a token: it reads the
# tokens' flags with pkcsconf -t, which needs no PIN, so it cannot cost a PIN try. Root only starts it: every
# openCryptoki tool it runs (pkcsconf -t, pkcsconf -i) runs as zrprobe, a system user in group pkcs11 only, because
# loading openCryptoki opens and re-owns the token files, and as root that follows a link a pkcs11 member planted
# there (CVE-2026-23893, openCryptoki before 3.27 without the distribution's fix).
# What it exports (zrunbook.prom, replaced in one mv so the collector never reads half a file):
#   zrunbook_slotd_up                    1 when pkcsslotd answered pkcsconf -t within LOOK_SECONDS (default 10)
#   zrunbook_token_user_pin_count_low    per initialised token: 1 after a wrong user PIN (CKF_USER_PIN_COUNT_LOW)
#   zrunbook_token_user_pin_final_try    1 when the next wrong user PIN locks it (CKF_USER_PIN_FINAL_TRY); Apache's
#                                        pkcs11-provider then cancels every new login, the good PIN's too
#   zrunbook_token_user_pin_locked       1 when the user PIN is locked (CKF_USER_PIN_LOCKED)
#   zrunbook_opencryptoki_info           openCryptoki's library version, as a label (pkcsconf -i)
#   zrunbook_fixed_versions_status       the exit status of check-fixed-versions.sh with the fixed-versions table's
#                                        rows: 0 every advisory fixed, 1 a package to update, 5 cannot tell (the
#                                        table confirms nothing for this release). The check is FIXED_VERSIONS_CHECK,
#                                        the rows FIXED_VERSIONS_ARGS (a file, one argument per line); both default to
#                                        the bundle's crypto/verify/ beside this script. Neither there: no metric.
#   zrunbook_certificate_not_after_timestamp_seconds   when the certificate expires: the one served at
#                                        CERT_CONNECT (host:port, name CERT_SERVERNAME), else the file CERT_FILE
#                                        (neither set: no certificate metric)
#   zrunbook_certificate_not_before_timestamp_seconds  when its lifetime began: the expiry alert fires past three
#                                        quarters of the lifetime, after the renewal at two thirds was due
#   zrunbook_token_store_suspect_entries  how many entries in the token store (OCK_DATA_STORE, default
#                                        /var/lib/opencryptoki) openCryptoki never writes: a symbolic link, a hard link
#                                        or anything but a plain file or folder; more than 0 is a planted link until
#                                        someone proves otherwise. Read with find, which follows no link
#   zrunbook_secure_key_tokens           how many initialised tokens are CCA or EP11 ones (Model: in pkcsconf -t):
#                                        secure-key tokens, which cannot work without a Crypto Express adapter
#   zrunbook_ap_card_online, _config, _chkstop, zrunbook_ap_card_requests_total   per adapter (cardNN), and
#   zrunbook_ap_queue_online, _config, _chkstop, zrunbook_ap_queue_requests_total per queue (NN.DDDD): the sysfs
#                                        attributes lszcrypt reads, from the AP bus (AP_SYSFS, default /sys/bus/ap).
#                                        IBM Z only: a host without an AP bus gets none of them, and an attribute
#                                        the kernel does not have (config and chkstop are new) gets no metric,
#                                        never a made-up zero
#   zrunbook_libica_rsa_operations_total RSA operations libica counted (icastats -S, every user), where="hardware"
#                                        (a Crypto Express adapter) or where="software" (libica's fallback when no
#                                        adapter answered); only where icastats is installed
#   zrunbook_textfile_timestamp_seconds  when this run wrote the file (an alert finds a stale file with it)
set -euo pipefail

die() { echo "zrunbook-textfile: $*" >&2; exit 2; }
dir=${1:-${TEXTFILE_DIR:-/var/lib/prometheus/node-exporter}}
here=$(dirname "${BASH_SOURCE[0]}")
fixed_check=${FIXED_VERSIONS_CHECK:-$here/../crypto/verify/check-fixed-versions.sh}
fixed_args=${FIXED_VERSIONS_ARGS:-$here/../crypto/verify/fixed-versions.args}
wait_s=${LOOK_SECONDS:-10}
store=${OCK_DATA_STORE:-/var/lib/opencryptoki}
((EUID == 0)) || die "run as root: it reads the whole token store and the AP counters, and runs pkcsconf as zrprobe:pkcs11."
[[ -d $dir && -w $dir ]] || die "$dir is not a writable directory: give the textfile collector's directory."
if [[ -n ${FIXED_VERSIONS_CHECK:-}${FIXED_VERSIONS_ARGS:-} ]]; then
  [[ -r $fixed_check ]] || die "FIXED_VERSIONS_CHECK: $fixed_check cannot be read (the bundle's crypto/verify/check-fixed-versions.sh)."
  [[ -r $fixed_args ]] || die "FIXED_VERSIONS_ARGS: $fixed_args cannot be read (the bundle's crypto/verify/fixed-versions.args)."
fi
command -v pkcsconf >/dev/null || die "pkcsconf is missing: install opencryptoki."
command -v timeout >/dev/null || die "timeout is missing: install coreutils."
command -v setpriv >/dev/null || die "setpriv is missing: install util-linux."
getent group pkcs11 | cut -d: -f4 | tr , '\n' | grep -qx zrprobe ||
  die "there is no user zrprobe listed in group pkcs11, as whom the token tools run: the slot daemon's step" \
    "(start-pkcsslotd.sh) makes it, or: useradd --system --no-create-home --shell /usr/sbin/nologin --groups pkcs11 zrprobe"
command -v openssl >/dev/null || die "openssl is missing: install openssl."
if [[ -n ${CERT_CONNECT:-} && -n ${CERT_FILE:-} ]]; then
  die "set CERT_CONNECT or CERT_FILE, not both."
fi
if [[ -n ${CERT_FILE:-} && ! -r ${CERT_FILE} ]]; then
  die "CERT_FILE=$CERT_FILE cannot be read."
fi

# A new file only (noclobber opens with O_EXCL, which follows no link planted under its name), made 0644 by the umask
# and written through one descriptor: the folder's parent belongs to node_exporter's user on Debian, so no write,
# chmod or open by name after this one.
tmp="$dir/.zrunbook.prom.$$.$RANDOM$RANDOM"
umask 022
set -C
exec 3>"$tmp"
set +C
trap 'rm -f "$tmp"' EXIT
metric() {  # NAME TYPE HELP: the header, once per name
  printf '# HELP %s %s\n# TYPE %s %s\n' "$1" "$3" "$1" "$2" >&3
}
label() {  # a label value with \, " and newlines escaped as the text format wants
  local v=${1//\\/\\\\}
  v=${v//\"/\\\"}
  printf '%s' "${v//$'\n'/\\n}"
}

# Token tools never as root: loading openCryptoki (any pkcsconf) opens every token's NVTOK.DAT and sets its mode
# and group, through a link if one was planted there. As zrprobe (group pkcs11 only) it has the rights of any
# member of the group, so a planted link reaches nothing a member could not change anyway.
as_group=(setpriv --reuid=zrprobe --regid=pkcs11 --clear-groups --)
# The slot daemon and the tokens' flags, from one pkcsconf -t.
up=0
listing=$(timeout -k 2 "$wait_s" "${as_group[@]}" pkcsconf -t 2>/dev/null) && up=1 || listing=""
metric zrunbook_slotd_up gauge "1 when the openCryptoki slot daemon answered pkcsconf -t."
echo "zrunbook_slotd_up $up" >&3
# One line per token: its flags (hex), its model (openCryptoki's token library: ICA, CCA, EP11, Soft, ...), its label.
tokens=$(awk '/^[[:space:]]*Label:/ { sub(/^[[:space:]]*Label:[[:space:]]*/, ""); sub(/[[:space:]]+$/, ""); label = $0; model = "-" }
              /^[[:space:]]*Model:/ { if (NF > 1) model = $2 }
              /^[[:space:]]*Flags:/ && label != "" { sub(/.*0x/, ""); sub(/[^0-9A-Fa-f].*/, ""); print $0, model, label; label = "" }' \
         <<<"$listing")
for flag in count_low:0x10000:"a wrong user PIN since the last good login" \
            final_try:0x20000:"the next wrong user PIN locks the token" \
            locked:0x40000:"the user PIN is locked"; do
  name=${flag%%:*} rest=${flag#*:}
  mask=${rest%%:*}
  metric "zrunbook_token_user_pin_$name" gauge "1 when ${rest#*:} (read from pkcsconf -t, no login)."
  while read -r flags _ token; do
    [[ -n $flags ]] || continue
    (( 16#$flags & 0x400 )) || continue  # not initialised: in no one's use
    echo "zrunbook_token_user_pin_$name{token=\"$(label "$token")\"} $(( (16#$flags & mask) != 0 ))" >&3
  done <<<"$tokens"
done
# Secure-key tokens: initialised CCA or EP11 tokens. Their keys exist only wrapped by an adapter's master key, so
# without an adapter they can neither sign nor fall back to software: the adapter alerts are critical on this host.
if ((up)); then
  secure=0
  while read -r flags model _; do
    if [[ -n $flags && ($model == CCA || $model == EP11) ]] && (( 16#$flags & 0x400 )); then
      secure=$((secure + 1))
    fi
  done <<<"$tokens"
  metric zrunbook_secure_key_tokens gauge "Initialised CCA or EP11 tokens (pkcsconf -t): they need a Crypto Express adapter."
  echo "zrunbook_secure_key_tokens $secure" >&3
fi

# The token store: openCryptoki writes only plain files and folders there. A symbolic link, a hard link, a FIFO or
# a device was put there by hand or by a member of the pkcs11 group; a link named NVTOK.DAT makes the next root
# process that loads openCryptoki (httpd's parent at its start or reload, an unpatched 3.23's pkcsconf) open and
# re-own its target. find follows no link, so counting them is safe; -printf prints one x per entry.
store_said="no token store at $store"
if [[ -d $store ]]; then
  # -H: a store that is itself a link (a site's own layout) is looked into; files openCryptoki 3.27 renames while
  # find reads (its .TMP files) do not fail the run
  odd=$(find -H "$store" -ignore_readdir_race \( -type l -o \( ! -type f ! -type d \) -o \( -type f -links +1 \) \) -printf x) ||
    die "find could not read all of $store."
  metric zrunbook_token_store_suspect_entries gauge "Entries in the token store that openCryptoki never writes (links, FIFOs, devices)."
  echo "zrunbook_token_store_suspect_entries ${#odd}" >&3
  store_said="token store: ${#odd} suspect entries"
  ((${#odd} == 0)) || store_said+=" (list them: find $store -type l -o ! -type f ! -type d -o -type f -links +1)"
fi

# openCryptoki's library version (pkcsconf -i: the library's own answer). The version alone cannot say whether a
# distribution's package carries a fix (Debian 13's fixed 3.23 says 3.23 too): the patch level comes next.
if ((up)); then
  version=$(timeout -k 2 "$wait_s" "${as_group[@]}" pkcsconf -i 2>/dev/null | sed -n 's/^[[:space:]]*Library Version:[[:space:]]*\([0-9.]*\).*/\1/p')
  if [[ -n $version ]]; then
    metric zrunbook_opencryptoki_info gauge "openCryptoki's library version (pkcsconf -i)."
    echo "zrunbook_opencryptoki_info{version=\"$version\"} 1" >&3
  fi
fi

# The patch level: the verify step's own check with the fixed-versions table's rows, its exit status as the value.
patch="no patch-level metric (no check-fixed-versions.sh and fixed-versions.args beside this script)"
if [[ -r $fixed_check && -r $fixed_args ]]; then
  mapfile -t rows <"$fixed_args"
  status=0
  bash "$fixed_check" "${rows[@]}" >/dev/null 2>&1 || status=$?
  case $status in
    0) patch="patch level: every advisory fixed" ;;
    1) patch="patch level: a package to update (run $fixed_check to see which)" ;;
    5) patch="patch level: cannot tell (the table confirms nothing for this release)" ;;
    *) die "$fixed_check stopped with status $status: run it by hand with the rows of $fixed_args." ;;
  esac
  metric zrunbook_fixed_versions_status gauge "check-fixed-versions.sh's exit status: 0 fixed, 1 to update, 5 cannot tell."
  echo "zrunbook_fixed_versions_status $status" >&3
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
  echo "zrunbook_certificate_read{source=\"$(label "$cert_source")\"} $([[ -n $pem ]] && echo 1 || echo 0)" >&3
  if [[ -n $pem ]]; then
    end=$(openssl x509 -noout -enddate <<<"$pem")
    metric zrunbook_certificate_not_after_timestamp_seconds gauge "When the certificate expires (its notAfter)."
    echo "zrunbook_certificate_not_after_timestamp_seconds{source=\"$(label "$cert_source")\"} $(date -u -d "${end#notAfter=}" +%s)" >&3
    start=$(openssl x509 -noout -startdate <<<"$pem")
    metric zrunbook_certificate_not_before_timestamp_seconds gauge "When the certificate's lifetime began (its notBefore)."
    echo "zrunbook_certificate_not_before_timestamp_seconds{source=\"$(label "$cert_source")\"} $(date -u -d "${start#notBefore=}" +%s)" >&3
  fi
fi

# IBM Z only: the crypto adapters (cardNN) and their queues (NN.DDDD: adapter and domain) on the AP bus, read
# the way lszcrypt reads them. An attribute this kernel does not have, or a value that is not a number (a queue not
# yet initialised shows request_count "-"), gives no sample: never a made-up zero.
number() {  # FILE: its value when it is a readable whole number, else nothing
  local v
  [[ -r $1 ]] && read -r v <"$1" 2>/dev/null && [[ $v =~ ^[0-9]+$ ]] && echo "$v"
  return 0
}
ap_metric() {  # NAME TYPE ATTRIBUTE HELP DEVICE...: one sample per device whose ATTRIBUTE holds a number
  local name=$1 type=$2 attr=$3 help=$4 dev v t q labels samples=()
  shift 4
  for dev in "$@"; do
    v=$(number "$dev/$attr")
    [[ -n $v ]] || continue
    if [[ ${dev##*/} == card* ]]; then
      labels="card=\"${dev##*/}\""
      if [[ $type == gauge ]]; then  # the state gauges name the adapter's type (CEX8C, CEX8P, ...) for the alert
        t=""
        [[ -r $dev/type ]] && read -r t <"$dev/type"
        labels+=",type=\"$(label "$t")\""
      fi
    else
      q=${dev##*/}
      labels="card=\"card${q:0:2}\",queue=\"$q\""
    fi
    samples+=("$name{$labels} $v")
  done
  ((${#samples[@]})) || return 0
  metric "$name" "$type" "$help"
  printf '%s\n' "${samples[@]}" >&3
}
ap=${AP_SYSFS:-/sys/bus/ap}
cards=("$ap"/devices/card[0-9a-f][0-9a-f])
if [[ -e ${cards[0]} ]]; then
  queues=()
  for card in "${cards[@]}"; do
    for queue in "$card"/[0-9a-f][0-9a-f].[0-9a-f][0-9a-f][0-9a-f][0-9a-f]; do
      [[ -d $queue ]] && queues+=("$queue")
    done
  done
  for level in card queue; do
    if [[ $level == card ]]; then devs=("${cards[@]}"); else devs=("${queues[@]}"); fi
    ((${#devs[@]})) || continue
    ap_metric "zrunbook_ap_${level}_online" gauge online \
      "1 when the $level is online: the kernel sends it requests (sysfs online)." "${devs[@]}"
    ap_metric "zrunbook_ap_${level}_config" gauge config \
      "1 when the $level is configured, 0 when deconfigured (sysfs config)." "${devs[@]}"
    ap_metric "zrunbook_ap_${level}_chkstop" gauge chkstop \
      "1 when the $level is checkstopped (sysfs chkstop)." "${devs[@]}"
    ap_metric "zrunbook_ap_${level}_requests_total" counter request_count \
      "Requests this Linux sent to the $level (sysfs request_count)." "${devs[@]}"
  done
  adapters="${#cards[@]} adapter(s), ${#queues[@]} queue(s)"
else
  adapters="no AP bus here, so no adapter metrics (they need IBM Z)"
fi

# libica's own counters of RSA operations (modular exponentiation and CRT), every user's together as the signing
# check reads them: the hardware column counts what a Crypto Express adapter computed, the software column what
# libica computed itself because no adapter answered.
libica="no icastats here, so no libica metrics"
if command -v icastats >/dev/null; then
  table=$(icastats -S 2>&1) || die "icastats -S failed: $table"
  mapfile -t s < <(awk -F'|' '$1 ~ /^ *RSA-(ME|CRT) *$/ && $2 ~ /^ *[0-9]+ *$/ && $3 ~ /^ *[0-9]+ *$/ {
                                f = $1; gsub(/ /, "", f); hw = $2; sw = $3; gsub(/ /, "", hw); gsub(/ /, "", sw)
                                printf "zrunbook_libica_rsa_operations_total{function=\"%s\",where=\"hardware\"} %s\n", f, hw
                                printf "zrunbook_libica_rsa_operations_total{function=\"%s\",where=\"software\"} %s\n", f, sw }' <<<"$table")
  ((${#s[@]} == 4)) || die "icastats -S shows no RSA-ME and RSA-CRT rows (function | hardware | software): is it libica's icastats?"
  metric zrunbook_libica_rsa_operations_total counter "RSA operations libica counted, every user's (icastats -S), in hardware or in software."
  printf '%s\n' "${s[@]}" >&3
  libica="libica: RSA counters read"
fi

metric zrunbook_textfile_timestamp_seconds gauge "When zrunbook-textfile.sh wrote this file."
echo "zrunbook_textfile_timestamp_seconds $(date +%s)" >&3
exec 3>&-
mv -f "$tmp" "$dir/zrunbook.prom"
trap - EXIT
echo "wrote $dir/zrunbook.prom: slot daemon $([[ $up == 1 ]] && echo answering || echo NOT answering); $store_said; $patch; $adapters; $libica"
