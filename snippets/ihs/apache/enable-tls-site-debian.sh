#!/usr/bin/env bash
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
# alive PID: that process has not ended (kill -0 also reaches a zombie, which holds no port any more).
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
# httpd removes its PID file as it stops, so read it once and quietly: a file gone between a test and a read is
# "not running", not an error message.
running() {
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [[ -n $pid ]] && alive "$pid"
}
old=$(cat "$pidfile" 2>/dev/null || true)
if [[ -n $old ]] && alive "$old"; then
  apache2ctl stop
  # Wait for the old httpd itself, not its PID file: httpd removes the file before its parent process ends and
  # closes its listening sockets, and a start in that moment fails with "Address already in use".
  for _ in $(seq 150); do alive "$old" || break; sleep 0.2; done
  if alive "$old"; then
    echo "httpd (process $old) did not stop within 30 s, so it was not started again; its state and the end of" \
      "its error log:" >&2
    grep -E '^(Name|State):' "/proc/$old/status" >&2 || true
    echo "waiting in: $(cat "/proc/$old/wchan" 2>/dev/null || echo unknown)" >&2
    tail -n 5 /var/log/apache2/error.log >&2
    # AH00491 is logged after the workers are gone and the PID file is removed: the process is stuck in its exit.
    if tail -n 5 /var/log/apache2/error.log | grep -q AH00491; then
      echo "httpd logged the end of its shutdown (AH00491) but its process has not ended; end it with" \
        "'kill -KILL $old' and run this again." >&2
    fi
    exit 1
  fi
fi
# errlog_tail WHAT: say what httpd did and why, from the end of its error log (apache2ctl itself says little).
errlog_tail() {
  echo "httpd $1; the end of its error log:" >&2
  tail -n 5 /var/log/apache2/error.log >&2 || true
  exit 1
}
if ! apache2ctl start; then
  errlog_tail "did not start"
fi
for _ in $(seq 50); do running && break; sleep 0.2; done
running || errlog_tail "did not stay up"
echo "httpd serves $site"
