#!/usr/bin/env bash
# negates: ihs/apache/enable-tls-site-debian.sh
# checker: testinfra
# rejects: Address already in use
# test: checks/ihs/test_apache_site_steps.py::test_the_site_step_starts_httpd_only_once_the_old_one_has_ended
# NEGATIVE CASE (checks/ihs/test_apache_site_steps.py): the site step before 2026-11-26. It waited for httpd's PID
# file to go, but httpd removes that file before its parent process ends and closes its listening sockets, so the
# start that follows can fail with "Address already in use" (seen once in a make check run).
# Ubuntu/Debian: enable the TLS site saved as /etc/apache2/sites-available/tls.conf and the modules it uses,
# check the whole configuration, then stop and start httpd (a full start: mod_ssl sets up its session cache
# only then). Run as root, again after each change to the site.
set -euo pipefail

site=/etc/apache2/sites-available/tls.conf
[[ $EUID -eq 0 ]] || { echo "Run this as root." >&2; exit 1; }
for cmd in a2enmod a2ensite apache2ctl; do
  command -v "$cmd" >/dev/null || { echo "$cmd is missing: install Apache (apt-get install apache2)." >&2; exit 1; }
done
[[ -f "$site" ]] || { echo "$site does not exist: save the site configuration there first." >&2; exit 1; }

# The certificate and the key the site names must be there (a key given as a pkcs11: URI lives in the token).
value() { awk -v key="$1" '$1 == key {v = $2} END {gsub(/"/, "", v); print v}' "$site"; }
cert=$(value SSLCertificateFile)
key=$(value SSLCertificateKeyFile)
[[ -n "$cert" && -r "$cert" ]] ||
  { echo "The site names the certificate '$cert', which does not exist: save your CA's certificate there." >&2; exit 1; }
if [[ "$key" != pkcs11:* ]]; then
  [[ -n "$key" && -r "$key" ]] ||
    { echo "The site names the key '$key', which does not exist: put the certificate's key there." >&2; exit 1; }
fi

# The modules the site uses: mod_ssl, mod_headers for Header lines, mod_http2 for a Protocols line with h2
# (Debian's http2.conf then also offers h2 to every other site; leave it off for a site without that line).
modules=(ssl)
grep -Eq '^[[:space:]]*Header[[:space:]]' "$site" && modules+=(headers)
grep -Eq '^[[:space:]]*Protocols[[:space:]].*\bh2\b' "$site" && modules+=(http2)
a2enmod -q "${modules[@]}"
a2ensite -q tls
apache2ctl -t
# Without systemd (a container) apache2ctl starts httpd itself; with systemd it asks systemctl.
pidfile=/run/apache2/apache2.pid
# httpd removes its PID file as it stops, so read it once and quietly: a file gone between a test and a read is
# "not running", not an error message.
running() {
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}
if running; then
  apache2ctl stop
  for _ in $(seq 50); do running || break; sleep 0.2; done
fi
apache2ctl start
for _ in $(seq 50); do running && break; sleep 0.2; done
if ! running; then
  echo "httpd did not stay up; the end of its error log:" >&2
  tail -n 5 /var/log/apache2/error.log >&2
  exit 1
fi
echo "httpd serves $site"
