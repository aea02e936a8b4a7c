#!/usr/bin/env bash
# negates: ihs/apache/use-prefork-mpm-debian.sh
# checker: testinfra
# rejects: serves HTTP/2 with severe limits
# test: checks/ihs/test_apache_prefork_http2.py::test_the_old_mpm_step_says_http2_is_served_while_the_site_offers_http_1_1_only
# NEGATIVE CASE (checks/ihs/test_apache_prefork_http2.py): the MPM step before 2026-12 (walkthrough M2). Its note
# said mod_http2 serves HTTP/2 "with severe limits" under prefork; in fact mod_http2 logs AH10034 and offers no h2.
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
# mod_http2 works with prefork, but Apache's documentation calls its limits there severe: say so.
if [[ -e /etc/apache2/mods-enabled/http2.load ]]; then
  echo "Note: mod_http2 is enabled; with prefork it serves HTTP/2 with severe limits (Apache's mod_http2 page)." >&2
fi

# Exactly one MPM may be loaded: turn the threaded ones off, then prefork on.
for mpm in mpm_event mpm_worker; do
  if [[ -e /etc/apache2/mods-enabled/$mpm.load ]]; then a2dismod -q "$mpm"; fi
done
a2enmod -q mpm_prefork
apache2ctl -t
echo "The prefork MPM is enabled; stop and start httpd (the site step) for it to take effect."
