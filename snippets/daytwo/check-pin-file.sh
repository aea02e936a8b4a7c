#!/usr/bin/env bash
# Proves, without a token login, that a running Apache httpd will log in to its token with the PIN you give: the PIN
# file its OpenSSL configuration names holds TOKEN_USER_PIN, and httpd started after the file was last written (its
# parent process reads the file only when it starts). A PIN file left with an old PIN is found here, before httpd's
# next start or graceful reload counts a failed login for it. Read-only. Run as root (it reads the PIN file and
# httpd's environment) with the token's current user PIN in TOKEN_USER_PIN:
#   TOKEN_USER_PIN=... bash check-pin-file.sh
# Exit status: 0 as above; 1 the file or httpd holds another PIN, or the check could not look.
set -euo pipefail

die() { echo "check-pin-file: $*" >&2; exit 1; }
((EUID == 0)) || die "run as root: it reads the PIN file and httpd's environment (/proc/PID/environ)."
[[ -n ${TOKEN_USER_PIN:-} ]] || die "set TOKEN_USER_PIN to the token's current user PIN (read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN)."
for tool in ps getconf; do
  command -v "$tool" >/dev/null || die "$tool is missing: install procps and coreutils."
done
# httpd's parent: the oldest apache2 or httpd process that still runs (one that ended unreaped is in state Z).
pid=$(ps -o pid=,stat= -C apache2,httpd --sort=start_time 2>/dev/null | awk '$2 !~ /^Z/ { print $1; exit }' || true)
[[ -n $pid ]] || die "no httpd (apache2 or httpd) is running."
conf=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^OPENSSL_CONF=//p')
[[ -n $conf && -r $conf ]] || die "httpd (pid $pid) has no readable OPENSSL_CONF: it does not reach a token through pkcs11-provider."
pin=$(sed -n 's/^[[:space:]]*pkcs11-module-token-pin[[:space:]]*=[[:space:]]*//p' "$conf" | tail -n 1)
[[ $pin == file:/* ]] || die "$conf names no PIN file (pkcs11-module-token-pin = file:/PATH)."
file=${pin#file:}
[[ -f $file ]] || die "the PIN file $file does not exist: httpd cannot start again."

# The file's content against the PIN, in the shell: the PIN is never on a command line or in the output.
held=$(<"$file")
if [[ $held != "$TOKEN_USER_PIN" ]]; then
  echo "check-pin-file: the PIN file $file does not hold the user PIN in TOKEN_USER_PIN. If the token's PIN was" \
    "changed, httpd's next start logs in with the file's old PIN: the token counts a failed login at each try, httpd" \
    "does not start, and three tries lock the token. Write the current PIN to the file (the PIN rotation page)" \
    "and restart httpd." >&2
  exit 1
fi
# Both times to a hundredth of a second: httpd's start from its start time in clock ticks since boot
# (/proc/PID/stat, field 22) and the time since boot (/proc/uptime); the file's from its modification time.
# Whole seconds (ps etimes, stat %Y) cannot order a file written in the second httpd started.
hz=$(getconf CLK_TCK)
read -r up _ </proc/uptime
ticks=$(sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $20 }')
started=$(awk -v now="$(date +%s.%N)" -v up="$up" -v t="$ticks" -v hz="$hz" 'BEGIN { printf "%.2f", now - (up - t / hz) }')
written=$(date -r "$file" +%s.%N)
if awk -v s="$started" -v w="$written" 'BEGIN { exit !(s < w) }'; then
  echo "check-pin-file: httpd (pid $pid) started at $(date -d "@$started" '+%F %T.%2N'), before $file was last" \
    "written ($(date -d "@$written" '+%F %T.%2N')): it still holds the PIN it read then, and each worker it starts (a" \
    "graceful reload starts new ones) logs in with it. Stop and start httpd." >&2
  exit 1
fi
echo "httpd (pid $pid) reads the PIN file $file, which holds the PIN given, and it started after the file was written."
