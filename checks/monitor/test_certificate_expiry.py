"""verify's certificate-expiry step (snippets/monitor/check-certificate-expiry.sh) against the token site on a container
host: the test CA's 90-day certificate passes the default 30 days and fails a threshold it does not reach, and fails
for a name it is not for; a server certificate that is fine but rests on a CA that ends in 5 days fails, naming the CA.

amd64 only: the check reads a date from one handshake; nothing in it depends on the architecture (the verify fleet
test runs it on both hosts through make verify)."""

from __future__ import annotations

import pytest

from checks.hosts import amd64_only, apache
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.steps import run_snippet, snippet_path, start_pkcsslotd
from checks.hosts.util import output

SNIPPET = "monitor/check-certificate-expiry.sh"
CHECK = f"bash {snippet_path(SNIPPET)} 127.0.0.1:443 www.example.com"
pytestmark = [pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SHA256), pytest.mark.from_state(TOKEN_KEY)]


@pytest.mark.negative("monitor/check-certificate-expiry.sh",
                      expects="a threshold beyond the certificate's end fails the check (renew it), and so does a CA "
                              "that did not sign it")
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
    # A name the certificate is not for (openCryptoki's statistics play no part: only the handshake is read).
    wrong = fresh_host.run(f"CA_FILE={ca} bash {snippet_path(SNIPPET)} 127.0.0.1:443 www.other.example")
    assert wrong.rc == 1, output(wrong)
    assert "the certificate 127.0.0.1:443 serves is not for www.other.example" in wrong.stderr, output(wrong)
    assert "DNS:www.example.com" in wrong.stderr, output(wrong)
    # Without a name, the address is checked against the certificate's addresses: the test certificate has none.
    bare = fresh_host.run(f"CA_FILE={ca} bash {snippet_path(SNIPPET)} 127.0.0.1:443")
    assert bare.rc == 1, output(bare)
    assert "is not for 127.0.0.1" in bare.stderr, output(bare)


@pytest.mark.negative("monitor/check-certificate-expiry.sh",
                      expects="the check fails naming the CA certificate that expires in 4 day(s): less than 30")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_ca_that_ends_in_5_days_fails_the_check_while_the_server_certificate_is_fine(fresh_host):
    start_pkcsslotd(fresh_host)
    apache.serve_token(fresh_host)
    ca = "/root/short-ca"
    fresh_host.run_expect([0], f"mkdir -p {ca} && openssl req -x509 -newkey rsa:2048 -noenc -keyout {ca}/ca.key "
                               f"-out {ca}/ca.crt -days 5 -subj '/CN=short-lived CA' -addext "
                               "basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null")
    fresh_host.run_expect([0], f"openssl x509 -req -in /etc/ssl/www.example.com.csr -CA {ca}/ca.crt -CAkey {ca}/ca.key "
                               "-days 90 -copy_extensions copyall -out /etc/ssl/certs/www.example.com.crt 2>/dev/null")
    apache.start(fresh_host)
    r = fresh_host.run(f"CA_FILE={ca}/ca.crt {CHECK}")
    assert r.rc == 1, output(r)
    assert "the CA certificate 'CN=short-lived CA' that 127.0.0.1:443's certificate rests on expires on" in r.stderr, \
        output(r)
    assert "in 4 day(s): less than 30" in r.stderr, output(r)
    assert fresh_host.run(f"CERT_DAYS=3 CA_FILE={ca}/ca.crt {CHECK}").rc == 0  # the server's own is fine


def sign_aged(host, lifetime_days: int, age_days: int) -> None:
    """The served certificate signed again by the site's test CA, lifetime_days long and age_days old; httpd
    started again with it."""
    now = int(host.check_output("date +%s"))
    stamps = [host.check_output(f"date -u -d @{t} +%Y%m%d%H%M%SZ").strip()
              for t in (now - age_days * 86400, now + (lifetime_days - age_days) * 86400)]
    served = "/etc/ssl/certs/www.example.com.crt"
    host.run_expect([0], f"openssl x509 -in {served} -CA {apache.CA}/ca.crt -CAkey {apache.CA}/ca.key -set_serial 47"
                         f" -not_before {stamps[0]} -not_after {stamps[1]} -out /tmp/aged.crt"
                         f" && cp /tmp/aged.crt {served}")
    apache.start(host)


@pytest.mark.negative("monitor/check-certificate-expiry.sh",
                      expects="a 47-day certificate past three quarters of its life fails; a fixed 30 days fails it "
                              "on day 20, before its renewal is due")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_47_day_certificate_passes_until_three_quarters_of_its_life_and_a_fixed_30_days_would_fail_it(fresh_host):
    """The source review's M-4: with the runbook's own 47-day certificates, a fixed 30 days failed every healthy
    host from day 17 to the renewal on day 31. Judged as the alert judges (three quarters of the certificate's own
    lifetime, day 35.25), day 20 passes and day 36 fails; CERT_DAYS=30, the old default, fails day 20."""
    start_pkcsslotd(fresh_host)
    ca = apache.serve_token(fresh_host)
    sign_aged(fresh_host, 47, 20)
    healthy = fresh_host.run(f"CA_FILE={ca} {CHECK}")
    assert healthy.rc == 0, output(healthy)
    fixed = fresh_host.run(f"CERT_DAYS=30 CA_FILE={ca} {CHECK}")
    assert fixed.rc == 1, output(fixed)
    assert "in 26 day(s): less than 30; renew it." in fixed.stderr, output(fixed)  # 27 days less the seconds since
    sign_aged(fresh_host, 47, 36)
    late = fresh_host.run(f"CA_FILE={ca} {CHECK}")
    assert late.rc == 1, output(late)
    assert "serves is past three quarters of its lifetime" in late.stderr, output(late)
    assert "in 10 day(s)" in late.stderr, output(late)
