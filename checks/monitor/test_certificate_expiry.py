"""verify's certificate-expiry step (snippets/monitor/check-certificate-expiry.sh) against the token site on a container
host: the test CA's 90-day certificate passes the default 30 days and fails a threshold it does not reach.

amd64 only: the check reads a date from one handshake; nothing in it depends on the architecture (the verify fleet
test runs it on both hosts through make verify)."""

from __future__ import annotations

import pytest

from checks.hosts import apache
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.steps import run_snippet, snippet_path, start_pkcsslotd
from checks.hosts.util import output

SNIPPET = "monitor/check-certificate-expiry.sh"
CHECK = f"bash {snippet_path(SNIPPET)} 127.0.0.1:443 www.example.com"
pytestmark = [pytest.mark.only_hosts("debian13-amd64"), pytest.mark.from_state(TOKEN_KEY)]


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_the_served_certificate_is_valid_for_30_days_and_fails_a_threshold_beyond_its_end(fresh_host):
    start_pkcsslotd(fresh_host)
    ca = apache.serve_token(fresh_host)
    good = fresh_host.run(f"CA_FILE={ca} {CHECK}")
    assert good.rc == 0, output(good)
    assert "127.0.0.1:443 (www.example.com): the certificate is valid until" in good.stdout
    left = int(good.stdout.rsplit("(", 1)[1].split()[0])
    assert 0 < left <= 90, good.stdout
    # A certificate expiring within the threshold: the same 90-day certificate against 91 days.
    soon = fresh_host.run(f"CERT_DAYS=91 CA_FILE={ca} {CHECK}")
    assert soon.rc == 1, output(soon)
    assert f"in {left} day(s): less than 91; renew it." in soon.stderr, output(soon)
    # A CA that did not sign it: no certificate is read, and the check says why instead of a date.
    other = fresh_host.run(f"CA_FILE=/etc/ssl/certs/ca-certificates.crt {CHECK}")
    assert other.rc == 1, output(other)
    assert "no certificate from 127.0.0.1:443" in other.stderr, output(other)
    assert run_snippet(fresh_host, SNIPPET, "no-port").rc == 2
