"""What the prefork MPM takes from the token site: HTTP/2 (walkthrough 2026-12, M2).

The token page's step for first users (snippets/ihs/apache/use-prefork-mpm-debian.sh) switches Debian's httpd from
the event MPM to prefork. mod_http2 does not run under prefork: it logs AH10034 ("the HTTP/2 protocol will be
inactive") and the site's ``Protocols h2 http/1.1`` line then offers only http/1.1 in ALPN. The step's note and the
page's "What prefork costs" must say so.

The check asks the site as a browser does, ``openssl s_client -alpn h2,http/1.1``, and reads what the server chose.
Its negative: the same question under the event MPM gets h2 (so the probe sees h2 where it is offered), and the
step as it was said that mod_http2 "serves HTTP/2 with severe limits" under prefork while the site then offers
http/1.1 only: a note that contradicts the server.

On amd64 only: prefork's workers abort under qemu-user on the s390x host (the page says so), and mod_http2 picks
its behaviour from the MPM's module name, not from the architecture.
"""

import re
from pathlib import Path

import pytest

from checks.hosts.apache import TOKEN_KEY, put, serve_token, start
from checks.hosts.steps import snippet_path
from checks.hosts.util import ok

pytestmark = pytest.mark.only_hosts("debian13-amd64", why="prefork's workers abort under qemu-user (the page says so)")

PREFORK = "ihs/apache/use-prefork-mpm-debian.sh"
SITE = "ihs/apache/apache-tls-pkcs11.conf"
BAD = Path(__file__).parent / "bad"
PAGE = Path(__file__).parents[2] / "docs" / "how-to" / "ihs" / "05-apache-pkcs11-provider.md"


def alpn(host, ca: str) -> str:
    """The protocol the site chooses when the client offers h2 and http/1.1, as a browser does ('' for none)."""
    # only the ALPN line: after an h2 handshake the server's binary HTTP/2 frames follow on s_client's output
    out = host.run(f"echo | timeout 60 openssl s_client -connect 127.0.0.1:443 -servername www.example.com "
                   f"-CAfile {ca} -verify_return_error -alpn h2,http/1.1 2>&1"
                   " | grep -aE '^(ALPN protocol:|No ALPN negotiated|Verify return code)'").stdout
    m = re.search(r"^ALPN protocol: (\S+)", out, re.M)
    assert m or "No ALPN negotiated" in out, out
    return m.group(1) if m else ""


def note_agrees(note: str, chosen: str) -> bool:
    """The MPM step's note against the server: a note that says HTTP/2 is still served must see h2 chosen, one
    that says prefork turns HTTP/2 off must see it not chosen."""
    says_served = "serves HTTP/2" in note and "HTTP/2 off" not in note
    says_off = "HTTP/2 off" in note
    return (says_served and chosen == "h2") or (says_off and chosen != "h2")


def what_prefork_costs() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start_at = text.index("What prefork costs.")
    return text[start_at:text.index("The check below sends 16 clients", start_at)]


def switch_to_prefork(host, step: str):
    """An MPM step (the page's or the old one), then the page's site step (a full start); the step's result."""
    r = host.run(f"bash {step}")
    assert r.rc == 0, r.stdout + r.stderr
    start(host)
    assert "prefork" in ok(host, "apache2ctl -V | grep 'Server MPM'")
    return r


@pytest.mark.snippet(PREFORK, SITE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_with_prefork_the_token_site_offers_http_1_1_only_as_the_step_and_the_page_say(fresh_host):
    ca = serve_token(fresh_host)
    step = switch_to_prefork(fresh_host, snippet_path(PREFORK))
    chosen = alpn(fresh_host, ca)
    assert chosen == "http/1.1"
    assert "AH10034" in ok(fresh_host, "cat /var/log/apache2/error.log")
    assert "Note: prefork turns HTTP/2 off" in step.stderr, step.stderr
    assert note_agrees(step.stderr, chosen)
    costs = what_prefork_costs()
    assert "**It switches HTTP/2 off.**" in costs
    assert "AH10034" in costs
    assert "only `http/1.1`" in costs
    assert "serves HTTP/2" not in costs


@pytest.mark.negative(
    "ihs/apache/use-prefork-mpm-debian.sh",
    expects="the old step's note (serves HTTP/2 with severe limits) contradicts the "
            "site, which offers http/1.1 only; under the event MPM the probe gets h2")
@pytest.mark.snippet(PREFORK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_old_mpm_step_says_http2_is_served_while_the_site_offers_http_1_1_only(fresh_host):
    ca = serve_token(fresh_host)
    assert alpn(fresh_host, ca) == "h2"  # the event MPM: the probe sees h2 where the site offers it
    put(fresh_host, "/tmp/old-mpm-step.sh", (BAD / "use-prefork-mpm-debian-http2-severe-limits.sh").read_text())
    old = switch_to_prefork(fresh_host, "/tmp/old-mpm-step.sh")
    assert "serves HTTP/2 with severe limits" in old.stderr, old.stderr
    chosen = alpn(fresh_host, ca)
    assert chosen == "http/1.1"
    assert not note_agrees(old.stderr, chosen)
