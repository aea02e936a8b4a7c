#!/usr/bin/env bash
# Ubuntu/Debian: make the fragment saved as /etc/apache2/conf-available/tls-session-cache.conf the only session
# cache settings: comment out the SSLSession* lines of mods-available/ssl.conf (a copy of the file is kept) and
# enable the fragment. Run as root; then restart httpd with the TLS site step (enable-tls-site-debian.sh).
# ssl.conf is a dpkg conffile: when an apache2 update changes it, dpkg asks whether to keep your version (keep it).
set -euo pipefail

conf=/etc/apache2/mods-available/ssl.conf
fragment=/etc/apache2/conf-available/tls-session-cache.conf
[[ $EUID -eq 0 ]] || { echo "Run this as root." >&2; exit 1; }
command -v a2enconf >/dev/null || { echo "a2enconf is missing: install Apache (apt-get install apache2)." >&2; exit 1; }
[[ -f "$fragment" ]] || { echo "$fragment does not exist: save the session cache fragment there first." >&2; exit 1; }
[[ -f "$conf" ]] || { echo "$conf does not exist: install Apache (apt-get install apache2)." >&2; exit 1; }

directives='SSLSession(Cache|CacheTimeout|Tickets)'
active=$(grep -Ec "^[[:space:]]*${directives}[[:space:]]" "$conf" || true)
if ((active > 0)); then
  [[ -e "$conf.before-tls-session-cache" ]] || cp -p "$conf" "$conf.before-tls-session-cache"
  sed -i -E "s/^([[:space:]]*)(${directives}[[:space:]])/\1#\2/" "$conf"
  echo "commented out $active line(s) in $conf (the original is $conf.before-tls-session-cache)"
else
  echo "$conf sets no session cache line (any more)"
fi
a2enconf -q tls-session-cache
echo "enabled $fragment; restart httpd to use it"
