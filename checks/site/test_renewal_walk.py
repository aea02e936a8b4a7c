"""The renewal page (docs/how-to/renew-automatically.md) walked as its reader walks it, from the built site.

The reader, root on the Apache token site of the IHS chapter (the TOKEN_KEY state, on a host booted with systemd,
so that httpd and pkcsslotd are systemd's units as on a server), downloads the snippet bundle, its ``.sha256`` and
the install step from the site this run built (served on localhost, copied into the container, which has no
network), installs the bundle with that step, installs the timer and its service from the installed bundle where
the page says, and writes the environment file the unit reads. Then, with the served certificate made due: the
service started by systemd renews from the installed bundle; and the cron file, installed as the page says, run in
cron's environment (checks/hosts/cron.py), renews the next due certificate, its output in the journal through
``logger``. The host has no cron daemon: cron's environment, not its clock.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from checks.hosts import bundle, cron
from checks.hosts.acme import (
    ACME,
    ENV_FILE,
    PEBBLE,
    RENEWAL_STEPS,
    TEXTFILE_DIR,
    UNIT,
    age_served_certificate,
    served_fingerprint,
    start_pebble,
    token_labels,
)
from checks.hosts.apache import TOKEN_KEY, put, serve_token
from checks.hosts.token import ADMIN
from checks.hosts.util import ok, output

INSTALL = "daytwo/install-snippet-bundle.sh"
ACME_DIR = "daytwo/acme"
RENEW, SERVICE, TIMER, CRON = (f"{ACME_DIR}/renew-token-certificate{k}"
                               for k in ("-acme.sh", ".service", ".timer", ".cron"))
CRON_D = "/etc/cron.d/renew-token-certificate"

pytestmark = [pytest.mark.xdist_group("renewal-walk"),
              pytest.mark.only_hosts("debian13-amd64",
                                     why="Pebble and certbot are in the amd64 image only (checks/hosts/Containerfile)")]


def fetch(base_url: str, rel: str, dest: Path) -> Path:
    with urllib.request.urlopen(f"{base_url}/{rel}", timeout=30) as got:
        dest.write_bytes(got.read())
    return dest


@pytest.mark.reader_walk("how-to/renew-automatically")
@pytest.mark.uses(*RENEWAL_STEPS)
@pytest.mark.snippet(INSTALL, RENEW, SERVICE, TIMER, CRON, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_renewal_page_from_the_site_s_downloads_renews_under_systemd_and_from_cron(site, base_url, booted_host,
                                                                                       tmp_path):
    host = booted_host
    serve_token(host)
    # the page's downloads: the bundle and its .sha256 from downloads/, the install step from its download link
    files = [fetch(base_url, f"downloads/{name}", tmp_path / name)
             for name in ("zrunbook-snippets.tar.gz", "zrunbook-snippets.tar.gz.sha256")]
    files.append(fetch(base_url, f"_snippets/{INSTALL}", tmp_path / Path(INSTALL).name))
    bundle.copy_in(host, *files)
    said = ok(host, f"cd {bundle.DL} && bash {Path(INSTALL).name}")
    print(f"\n{said}")
    assert said.startswith("installed the snippet bundle"), said
    # "Renew unattended": the units from the installed bundle, the environment file, the timer enabled
    ok(host, f"cp {bundle.installed(SERVICE)} {bundle.installed(TIMER)} /etc/systemd/system/"
             " && systemctl daemon-reload && systemctl enable --now renew-token-certificate.timer")
    ok(host, f"install -d -m 0755 /etc/zrunbook {TEXTFILE_DIR}")  # TEXTFILE_DIR: prometheus-node-exporter's
    put(host, ENV_FILE, f"ACME_SERVER={ACME}\nACME_CA_BUNDLE={PEBBLE}/listener.crt\nTOKEN_ADMIN={ADMIN}\n")
    ok(host, f"chmod 0600 {ENV_FILE}")
    start_pebble(host)

    age_served_certificate(host, 90, 61)
    old = served_fingerprint(host)
    started = host.run(f"systemctl start {UNIT}")
    journal = ok(host, f"journalctl -u {UNIT} --no-pager -o cat")
    assert started.rc == 0, output(started) + journal
    assert "renew: www.example.com serves" in journal, journal
    by_systemd = served_fingerprint(host)
    assert by_systemd != old
    assert len(token_labels(host)) == 1
    metrics = ok(host, f"cat {TEXTFILE_DIR}/zrunbook-renewal-www.example.com.prom")
    assert 'zrunbook_certificate_renewal_last_exit_status{server_name="www.example.com"} 0' in metrics, metrics

    # "On a host without systemd": the cron file from the installed bundle in /etc/cron.d, its line as cron runs it
    ok(host, f"install -m 0644 {bundle.installed(CRON)} {CRON_D}")
    age_served_certificate(host, 47, 32)  # the certificate the service installed, made due again
    before = served_fingerprint(host)
    cron.syslog(host)
    ran = cron.run_line(host, ok(host, f"cat {CRON_D}"))
    assert ran.rc == 0, output(ran)
    log = cron.logged(host, "renew: www.example.com serves")
    print(log[-600:])
    assert served_fingerprint(host) not in (before, by_systemd, old)
    assert len(token_labels(host)) == 1
