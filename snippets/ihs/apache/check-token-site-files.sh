#!/usr/bin/env bash
# Proves that the files a running httpd uses to reach its token key are as the runbook keeps them: httpd was
# started with OPENSSL_CONF; that configuration includes the system's OpenSSL configuration first (so the
# distribution's policy, RHEL's crypto-policies or Debian's system_default, still applies to httpd); it names
# the PIN by file, not in the configuration itself; and the PIN file belongs to root and no one else can read
# or change it: httpd's root parent reads it once at start (pkcs11-provider 1.0 reads it when OpenSSL loads the
# provider, and the workers inherit the PIN), so httpd's group needs no access; and it turns pkcs11-provider's key
# cache off (with it on, each new worker fails the handshakes of its first second). It also finds a PIN left behind
# by a PIN change, without a PIN: openCryptoki rewrites the token's MK_USER file when the user PIN changes (C_SetPIN
# and C_InitPIN), so an MK_USER newer than the PIN file means the file holds an old PIN (httpd's next start logs in
# with it), and an MK_USER newer than httpd's start means httpd's parent holds one (each new worker's login fails).
# The token's folder is the one under OCK_DATA_STORE (/var/lib/opencryptoki) whose NVTOK.DAT holds the label that
# httpd's key URIs name (HTTPD_CONF_DIR: /etc/apache2, else /etc/httpd). Read-only; it does not load the provider,
# so it never logs in.
# Run as root (it reads the environment of httpd's parent process):
#   bash check-token-site-files.sh
# Exit status: 0 all as kept, 1 a file is not (every reason is listed), or the check could not look.
set -euo pipefail

die() { echo "check-token-site-files: $*" >&2; exit 1; }
((EUID == 0)) || die "run as root: it reads httpd's environment (/proc/PID/environ) and the PIN file's owner."
for tool in pgrep openssl stat awk getconf; do
  command -v "$tool" >/dev/null || die "$tool is missing: install procps, openssl, coreutils, gawk or mawk, and libc-bin."
done
# httpd's parent: a live apache2 or httpd process whose own parent is neither. An httpd that ended but was not
# reaped (a zombie, state Z: seen in containers started without an init) has no environment left to read.
pid=
for candidate in $(pgrep -x apache2 || true) $(pgrep -x httpd || true); do
  status=$(cat "/proc/$candidate/status" 2>/dev/null) || continue
  [[ $(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' <<<"$status") != Z ]] || continue
  parent=$(sed -n 's/^PPid:[[:space:]]*//p' <<<"$status")
  case $(cat "/proc/$parent/comm" 2>/dev/null) in apache2 | httpd) continue ;; esac
  pid=$candidate
  break
done
[[ -n $pid ]] || die "no httpd (apache2 or httpd) is running."
conf=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^OPENSSL_CONF=//p')
[[ -n $conf ]] || die "httpd (pid $pid) runs without OPENSSL_CONF: it cannot load pkcs11-provider, so its key is not in the token (see the page's OPENSSL_CONF step)."
[[ -r $conf ]] || die "httpd's OPENSSL_CONF $conf does not exist or cannot be read."

fail=()
# The system configuration, where this OpenSSL reads it by default: its OPENSSLDIR's openssl.cnf.
system=$(realpath -m "$(openssl version -d | sed -n 's/^OPENSSLDIR: "\(.*\)"$/\1/p')/openssl.cnf")
# The .include lines before the first section header (only those apply to the whole file).
included=$(awk '/^[[:space:]]*\[/ { exit } /^[[:space:]]*\.include/ { sub(/^[[:space:]]*\.include[[:space:]]*=?[[:space:]]*/, ""); print }' "$conf")
found=no
while read -r path; do
  [[ -n $path && -e $path && $(realpath "$path") == "$system" ]] && found=yes
done <<<"$included"
[[ $found == yes ]] ||
  fail+=("$conf does not include the system configuration $system before its first section: the distribution's TLS policy does not apply to httpd (put '.include $system' first)")

pin=$(sed -n 's/^[[:space:]]*pkcs11-module-token-pin[[:space:]]*=[[:space:]]*//p' "$conf" | tail -n 1)
if [[ -z $pin ]]; then
  fail+=("$conf sets no pkcs11-module-token-pin: httpd cannot log in to the token without a PIN")
elif [[ $pin != file:* ]]; then
  fail+=("$conf holds the PIN itself: name a PIN file (pkcs11-module-token-pin = file:/etc/ssl/private/apache-token.pin)")
else
  file=${pin#file:}
  if [[ ! -f $file ]]; then
    fail+=("the PIN file $file does not exist")
  else
    read -r mode owner group < <(stat -c '%a %U %G' "$file")
    [[ $owner == root ]] || fail+=("the PIN file $file belongs to $owner, not root: that user can change it")
    (( (8#$mode & 8#007) == 0 )) || fail+=("the PIN file $file is mode $mode: every user on the host can read or change it (chmod 0600)")
    (( (8#$mode & 8#070) == 0 )) || fail+=("the PIN file $file is mode $mode: group $group has access it does not need, since httpd's root parent reads the file (chmod 0600)")
  fi
fi
# The PIN's age: the token folders of the labels in httpd's key URIs, their MK_USER against the PIN file and httpd.
store=${OCK_DATA_STORE:-/var/lib/opencryptoki}
conf_dir=${HTTPD_CONF_DIR:-$( [[ -d /etc/apache2 ]] && echo /etc/apache2 || echo /etc/httpd )}
labels=$(grep -rhoE 'pkcs11:[^"[:space:]]*token=[^;"[:space:]]+' "$conf_dir" 2>/dev/null | sed 's/.*token=//' | sort -u || true)
# httpd's start, in seconds since the epoch: the boot time plus the process's start in clock ticks (/proc/PID/stat).
# The boot time is now minus /proc/uptime (to 0.01 s), not /proc/stat's btime: btime is cut to the whole second, so a
# PIN changed less than a second before httpd started (as the PIN rotation does) would read as changed after it.
ticks=$(awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$pid/stat")
read -r up _ </proc/uptime
started=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v now="$(date +%s.%N)" -v up="$up" \
  'BEGIN { printf "%.2f", now - up + t / hz }')
aged=""
for label in $labels; do
  padded=$(printf '%-32s' "$label")
  folder=""
  for nv in "$store"/*/NVTOK.DAT; do
    [[ -f $nv ]] && grep -qaF -- "$padded" "$nv" && { folder=${nv%/NVTOK.DAT}; break; }
  done
  if [[ -z $folder || ! -f $folder/MK_USER ]]; then
    fail+=("no token folder under $store holds the label $label of httpd's key (set OCK_DATA_STORE): the PIN's age was not checked")
    continue
  fi
  changed=$(stat -c %.2Y "$folder/MK_USER")
  if [[ -n ${file:-} && -f $file ]] && awk -v a="$changed" -v b="$(stat -c %.2Y "$file")" 'BEGIN { exit !(a > b) }'; then
    fail+=("the user PIN of token $label changed ($(date -d "@${changed%.*}" '+%F %T')) after the PIN file $file was written: it holds an old PIN, and httpd's next start logs in with it (write the new PIN to it, as the PIN rotation page does)")
  fi
  if awk -v a="$changed" -v b="$started" 'BEGIN { exit !(a > b) }'; then
    fail+=("the user PIN of token $label changed ($(date -d "@${changed%.*}" '+%F %T')) after httpd (pid $pid) started: httpd holds the old PIN and each new worker's login fails (stop and start httpd once the PIN file holds the new PIN)")
  fi
  aged+=" token $label's PIN is older than the PIN file and than httpd's start;"
done
cache=$(sed -n 's/^[[:space:]]*pkcs11-module-cache-keys[[:space:]]*=[[:space:]]*\([a-z]*\).*/\1/p' "$conf" | tail -n 1)
[[ $cache == false ]] ||
  fail+=("$conf leaves pkcs11-module-cache-keys at ${cache:-its default, true}: each new httpd worker then fails the handshakes that reach it in its first second (add 'pkcs11-module-cache-keys = false' to its pkcs11 section)")
if ((${#fail[@]})); then
  printf 'check-token-site-files: httpd (pid %s) with OPENSSL_CONF=%s:\n' "$pid" "$conf" >&2
  printf '  %s\n' "${fail[@]}" >&2
  exit 1
fi
echo "httpd (pid $pid) uses $conf: it includes $system first, its PIN file $file is root's alone (mode $mode),${aged} and key caching is off."
