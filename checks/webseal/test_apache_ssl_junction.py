"""The open-source analogue of a WebSEAL SSL junction, served for real on the amd64 container host.

Apache terminates TLS with its key in the openCryptoki token (pkcs11-provider) and passes /ssl-jct/ to a
TLS back end in the same container (re-encrypting, the back end's certificate verified) and /tcp-jct/ in
clear. Real requests go through both; a back end whose certificate the proxy does not trust is refused;
identity headers a client sends are dropped. amd64 only: under qemu-user the ICA token cannot sign with
the SHA-256 schemes curl offers (see the IHS chapter), and the measurement would time emulation.
"""

import hashlib

import pytest

from checks.hosts import amd64_only
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.junction import BACKEND, backend, get, measure, serve
from checks.hosts.steps import run_snippet
from checks.hosts.util import ok

SNIPPETS = ("webseal/apache/apache-ssl-junction.conf", "webseal/apache/enable-proxy-modules.sh")
pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SHA256)


def backend_log(host) -> list[str]:
    return host.check_output(f"cat {BACKEND}/access.log").splitlines()


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(*SNIPPETS, checker="apache-tls")
def test_pages_come_through_both_junctions_the_ssl_one_over_tls_to_the_back_end(fresh_host):
    ca = serve(fresh_host)
    want = hashlib.sha256(fresh_host.file("/srv/backend/page-5.8k.html").content).hexdigest()
    for junction, port in (("ssl-jct", "9443"), ("tcp-jct", "9080")):
        r = get(fresh_host, ca, f"/{junction}/page-5.8k.html")
        assert r.stdout == "200 5939", r.stdout + r.stderr
        assert hashlib.sha256(fresh_host.file("/tmp/got").content).hexdigest() == want
        assert backend_log(fresh_host)[-1] == f"{port} HTTP/1.1 GET /page-5.8k.html 200"
    # front end: TLS 1.3 with the key in the token
    hs = fresh_host.run("echo | openssl s_client -connect 127.0.0.1:443 -servername www.example.com "
                        f"-CAfile {ca} -verify_return_error -brief 2>&1")
    assert "Protocol version: TLSv1.3" in hs.stdout, hs.stdout


@pytest.mark.negative("webseal/apache/apache-ssl-junction.conf",
                      expects="a back end signed by an untrusted CA gets 500 or 502 (certificate verify failed); the "
                              "TCP junction serves")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(*SNIPPETS, checker="apache-tls")
def test_ssl_junction_refuses_a_back_end_signed_by_an_untrusted_ca(fresh_host):
    ca = serve(fresh_host)
    ok(fresh_host, "mkdir -p /root/other-ca && cd /root/other-ca && openssl req -x509 -newkey rsa:2048 -nodes "
                    "-keyout ca.key -out ca.crt -days 5 -subj '/CN=someone else' 2>/dev/null")
    backend(fresh_host, "/root/other-ca")
    status = get(fresh_host, ca, "/ssl-jct/page-5.8k.html").stdout.split()[0]
    assert status in ("500", "502"), status
    log = fresh_host.check_output("cat /var/log/apache2/error.log")
    assert "certificate verify failed" in log or "SSL Handshake" in log, log[-2000:]
    assert get(fresh_host, ca, "/tcp-jct/page-5.8k.html").stdout == "200 5939"


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(*SNIPPETS, checker="apache-tls")
def test_identity_headers_from_clients_do_not_reach_the_back_end(fresh_host):
    ca = serve(fresh_host)
    log_format = 'LogFormat "%p %H %m %U %s %{iv-user}i" junction'
    ok(fresh_host, f"sed -i 's/^LogFormat .*/{log_format}/' {BACKEND}/httpd.conf"
                    f" && apache2 -f {BACKEND}/httpd.conf -k graceful && sleep 1")
    r = get(fresh_host, ca, "/ssl-jct/page-5.8k.html", "-H 'iv-user: sec_master'")
    assert r.stdout == "200 5939"
    assert backend_log(fresh_host)[-1].endswith(" 200 -"), backend_log(fresh_host)[-1]


@pytest.mark.snippet("webseal/apache/enable-proxy-modules.sh", checker="testinfra")
def test_enable_proxy_modules_is_safe_to_run_twice(fresh_host):
    for _ in range(2):
        r = run_snippet(fresh_host, "webseal/apache/enable-proxy-modules.sh")
        assert r.rc == 0, r.stderr
    loaded = fresh_host.run("apache2ctl -M 2>/dev/null").stdout
    assert "proxy_http_module" in loaded
    assert "headers_module" in loaded


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(*SNIPPETS, checker="apache-tls")
def test_both_junctions_sustain_a_short_bounded_load(fresh_host):
    ca = serve(fresh_host)
    for junction in ("tcp-jct", "ssl-jct"):
        seconds, rate, cpu_ms = measure(fresh_host, ca, junction, 200)
        assert seconds < 60
        assert rate > 0
        assert cpu_ms > 0
