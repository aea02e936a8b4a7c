#!/usr/bin/env bash
# Ubuntu/Debian: serve the token site with the prefork MPM (one connection per process) instead of Debian's
# default, event, so that no handshake waits for another thread's token login. Run as root, then run the site
# step (enable-tls-site-debian.sh): httpd chooses its MPM only at a full start, a graceful reload keeps the old one.
set -euo pipefail

[[ $EUID -eq 0 ]] || { echo "Run this as root." >&2; exit 1; }
for cmd in a2enmod a2dismod apache2ctl; do
  command -v "$cmd" >/dev/null || { echo "$cmd is missing: install Apache (apt-get install apache2)." >&2; exit 1; }
done
[[ -f /etc/apache2/mods-available/mpm_prefork.load ]] ||
  { echo "This Apache has no prefork MPM (/etc/apache2/mods-available/mpm_prefork.load is missing)." >&2; exit 1; }
# mod_http2 does not run under prefork: it logs AH10034 at the start and offers no h2, so a site's
# "Protocols h2 http/1.1" line then serves HTTP/1.1 only. Say so where HTTP/2 was asked for.
if [[ -e /etc/apache2/mods-enabled/http2.load ]] ||
   grep -Eqs '^[[:space:]]*Protocols[[:space:]].*\bh2\b' /etc/apache2/sites-enabled/*; then
  echo "Note: prefork turns HTTP/2 off (mod_http2 logs AH10034): clients get HTTP/1.1 only. Keep the event MPM" \
       "if you need HTTP/2." >&2
fi

# Exactly one MPM may be loaded: turn the threaded ones off, then prefork on.
for mpm in mpm_event mpm_worker; do
  if [[ -e /etc/apache2/mods-enabled/$mpm.load ]]; then a2dismod -q "$mpm"; fi
done
a2enmod -q mpm_prefork
apache2ctl -t
echo "The prefork MPM is enabled; stop and start httpd (the site step) for it to take effect."
