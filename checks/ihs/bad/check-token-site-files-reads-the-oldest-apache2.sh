#!/usr/bin/env bash
# negates: ihs/apache/check-token-site-files.sh
# checker: testinfra
# rejects: /environ: No such process
# test: checks/ihs/test_token_site_files.py::test_a_dead_unreaped_httpd_beside_the_running_one_does_not_fail_the_check
# NEGATIVE CASE (checks/ihs/test_token_site_files.py): the check before 2026-11-27. It took the oldest process
# named apache2 or httpd as httpd's parent, so a dead, unreaped httpd (a zombie, in a container without an init)
# made it fail on reading /proc/PID/environ (No such process) while the running httpd was right.
# Proves that the files a running httpd uses to reach its token key are as the runbook keeps them: httpd was
# started with OPENSSL_CONF; that configuration includes the system's OpenSSL configuration first (so the
# distribution's policy, RHEL's crypto-policies or Debian's system_default, still applies to httpd); it names
# the PIN by file, not in the configuration itself; and the PIN file belongs to root and no one else can read
# or change it: httpd's root parent reads it once at start (pkcs11-provider 1.0 reads it when OpenSSL loads the
# provider, and the workers inherit the PIN), so httpd's group needs no access; and it turns pkcs11-provider's key
# cache off (with it on, each new worker fails the handshakes of its first second). Read-only; it does not load
# the provider, so it never logs in.
# Run as root (it reads the environment of httpd's parent process):
#   bash check-token-site-files.sh
# Exit status: 0 all as kept, 1 a file is not (every reason is listed), or the check could not look.
set -euo pipefail

die() { echo "check-token-site-files: $*" >&2; exit 1; }
((EUID == 0)) || die "run as root: it reads httpd's environment (/proc/PID/environ) and the PIN file's owner."
for tool in pgrep openssl stat; do
  command -v "$tool" >/dev/null || die "$tool is missing: install procps, openssl and coreutils."
done
pid=$(pgrep -o -x apache2 || pgrep -o -x httpd || true)
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
cache=$(sed -n 's/^[[:space:]]*pkcs11-module-cache-keys[[:space:]]*=[[:space:]]*\([a-z]*\).*/\1/p' "$conf" | tail -n 1)
[[ $cache == false ]] ||
  fail+=("$conf leaves pkcs11-module-cache-keys at ${cache:-its default, true}: each new httpd worker then fails the handshakes that reach it in its first second (add 'pkcs11-module-cache-keys = false' to its pkcs11 section)")
if ((${#fail[@]})); then
  printf 'check-token-site-files: httpd (pid %s) with OPENSSL_CONF=%s:\n' "$pid" "$conf" >&2
  printf '  %s\n' "${fail[@]}" >&2
  exit 1
fi
echo "httpd (pid $pid) uses $conf: it includes $system first, its PIN file $file is root's alone (mode $mode), and key caching is off."
