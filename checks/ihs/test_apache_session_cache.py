"""TLS session resumption on the open-source equivalent, served for real on the amd64 host.

The chapter's site (apache-tls-openssl.conf) is started with apache_host's helpers, then set up the way
the session-cache page says for Debian/Ubuntu: the distribution's SSLSession* lines in ssl.conf commented
out, apache-tls-session-cache.conf enabled, httpd stopped and started. The reader's check
(check-session-resumption.sh) then runs for real inside the container. What it proves:

* with the fragment, TLS 1.2 and TLS 1.3 sessions are resumed (its output is the page's shown output);
* with no cache and no tickets (checks/ihs/bad/apache-tls-session-cache-off.conf) nothing is resumed and
  the check fails, saying so (the negative case; its output is shown on the page too);
* SSLSessionCacheTimeout decides: a session older than the timeout is not resumed;
* a resumed connection costs the key in the token no signature (OpenSC's pkcs11-spy counts C_SignInit);
* why the page says "comment out the distribution's lines" and "stop and start": a later
  "SSLSessionCache none" does not undo an earlier cache, and a graceful restart that turns the cache
  off stops httpd (seen with Apache 2.4.68 on Debian 13).
"""

import re
from pathlib import Path

import pytest

from checks.hosts import amd64_only
from checks.hosts.apache import TOKEN_KEY, enable_site, serve_files, start, token_key
from checks.hosts.steps import snippet_path
from checks.hosts.util import copy_to, output
from zrunbook import SNIPPETS
from zrunbook.shown_output import assert_shown_output

BAD = Path(__file__).parent / "bad"

CACHE = "ihs/apache/apache-tls-session-cache.conf"
ENABLE_CACHE = "ihs/apache/enable-session-cache-debian.sh"  # the page's Debian step
CHECK = "ihs/apache/check-session-resumption.sh"
CHECK_OUT = "ihs/apache/check-session-resumption.out"
NO_CACHE_OUT = "ihs/apache/check-session-resumption.no-cache.out"
CACHE_OFF = BAD / "apache-tls-session-cache-off.conf"
DEBIAN_SSL_CONF = "/etc/apache2/mods-available/ssl.conf"
CONF = "/etc/apache2/conf-available/tls-session-cache.conf"

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SHA256)


def session_config(host, text: str, *, comment_out_distribution_lines: bool = True) -> None:
    """The page's Debian/Ubuntu step: this file in, the distribution's session lines out and the file enabled
    (the page's snippet), httpd stopped and started. Without the snippet: only enabled (a2enconf)."""
    copy_to(host, text, CONF)
    if comment_out_distribution_lines:
        host.run_expect([0], f"bash {snippet_path(ENABLE_CACHE)}")
        assert host.run(f"grep -E '^[[:space:]]*SSLSession' {DEBIAN_SSL_CONF}").rc == 1
    else:
        host.run_expect([0], "a2enconf -q tls-session-cache")
    stop_and_start(host)


def stop_and_start(host) -> None:
    host.run_expect([0],
                    "apache2ctl stop; for i in $(seq 100); do pgrep -x apache2 >/dev/null || exit 0; sleep 0.1; done; "
                  "echo 'httpd did not stop'; exit 1")
    start(host)


def cache_snippet() -> str:
    return (SNIPPETS / CACHE).read_text(encoding="utf-8")


def resumption(host, ca: str, tries: int = 4):
    """The reader's check against the local httpd; stdout and stderr together, as a terminal shows them."""
    return host.run(f"CA_FILE={ca} TRIES={tries} bash {snippet_path(CHECK)} 127.0.0.1:443 www.example.com 2>&1")


def counts(result) -> dict[str, tuple[int, int]]:
    """'TLSv1.2' -> (resumed, full handshakes) from the check's summary lines."""
    found = re.findall(r"^(TLSv1\.[23]): (\d+) of \d+ reconnections resumed the session \(Reused\), "
                       r"(\d+) needed a full handshake \(New\)\.$", result.stdout, re.M)
    return {proto: (int(reused), int(new)) for proto, reused, new in found}


@pytest.mark.snippet(CACHE, checker="apache-tls")
@pytest.mark.snippet(CHECK, ENABLE_CACHE, "ihs/apache/enable-tls-site-debian.sh", "ihs/apache/test-ca.sh",
                     checker="testinfra")
@pytest.mark.snippet(CHECK_OUT, checker="output-regenerated")
def test_session_cache_fragment_lets_clients_resume_tls12_and_tls13_sessions(fresh_host):
    ca = serve_files(fresh_host)
    session_config(fresh_host, cache_snippet())
    result = resumption(fresh_host, ca)
    assert result.rc == 0, output(result)
    assert counts(result) == {"TLSv1.2": (4, 0), "TLSv1.3": (4, 0)}, output(result)
    # SSLSessionCacheTimeout 600 reaches the client as the TLS 1.3 ticket lifetime hint
    assert "TLSv1.3: session ticket lifetime hint from the server: 600 s." in result.stdout, output(result)
    assert_shown_output(CHECK_OUT, result.stdout)


@pytest.mark.uses("ihs/apache/enable-session-cache-debian.sh")
@pytest.mark.negative("ihs/apache/check-session-resumption.sh", expects="the check fails: no session to resume")
@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.snippet(NO_CACHE_OUT, checker="output-regenerated")
def test_resumption_check_fails_when_the_server_keeps_no_cache_and_sends_no_tickets(fresh_host):
    ca = serve_files(fresh_host)
    session_config(fresh_host, CACHE_OFF.read_text(encoding="utf-8"))
    result = resumption(fresh_host, ca)
    assert result.rc == 1, output(result)
    assert "TLSv1.2: the server gave no session to resume (no session ID, no session ticket)." in result.stdout
    assert counts(result) == {"TLSv1.3": (0, 4)}, output(result)
    assert "TLSv1.3: no session was resumed" in result.stdout, output(result)
    assert_shown_output(NO_CACHE_OUT, result.stdout)


@pytest.mark.uses("ihs/apache/enable-session-cache-debian.sh")
@pytest.mark.snippet(CACHE, checker="apache-tls")
def test_a_session_older_than_the_cache_timeout_needs_a_full_handshake(fresh_host):
    ca = serve_files(fresh_host)
    short = cache_snippet().replace("SSLSessionCacheTimeout 600", "SSLSessionCacheTimeout 2")
    assert "SSLSessionCacheTimeout 2\n" in short
    session_config(fresh_host, short)
    s_client = (f"printf 'HEAD / HTTP/1.0\\r\\n\\r\\n' | openssl s_client -connect 127.0.0.1:443 "
                f"-servername www.example.com -CAfile {ca} -tls1_2 -ign_eof")
    first = fresh_host.run(f"{s_client} -sess_out /tmp/session.pem 2>&1 | grep -E '^(New|Reused),'")
    assert first.stdout.startswith("New,"), output(first)
    at_once = fresh_host.run(f"{s_client} -sess_in /tmp/session.pem 2>&1 | grep -E '^(New|Reused),'")
    assert at_once.stdout.startswith("Reused,"), output(at_once)
    later = fresh_host.run(f"sleep 3; {s_client} -sess_in /tmp/session.pem 2>&1 | grep -E '^(New|Reused),'")
    assert later.stdout.startswith("New,"), output(later)


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(CACHE, checker="apache-tls")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_a_resumed_connection_costs_the_token_key_no_signature(fresh_host):
    """The key in the openCryptoki token (the form that mirrors IHS); pkcs11-spy logs every C_SignInit."""
    ca = token_key(fresh_host)
    enable_site(fresh_host, "ihs/apache/apache-tls-pkcs11.conf")
    start(fresh_host)
    spy = fresh_host.run("ls /usr/lib/*-linux-gnu/pkcs11/pkcs11-spy.so").stdout.strip()
    conf = "/etc/ssl/openssl-pkcs11.conf"  # where the chapter's token step installs it
    real = fresh_host.check_output(
        f"readlink -f $(sed -n -E 's/^[[:space:]]*pkcs11-module-path[[:space:]]*=[[:space:]]*//p' {conf})").strip()
    assert real, f"no pkcs11-module-path in {conf}"
    fresh_host.run_expect([0], f"sed -i -E 's|^([[:space:]]*pkcs11-module-path[[:space:]]*=).*|\\1 {spy}|' {conf}")
    fresh_host.run_expect([0],
                          f"printf 'export PKCS11SPY={real} PKCS11SPY_OUTPUT=/tmp/spy.log\\n' >> /etc/apache2/envvars")
    fresh_host.run_expect([0], "touch /tmp/spy.log && chmod 666 /tmp/spy.log")  # httpd's workers write to it too
    session_config(fresh_host, cache_snippet())

    def signatures() -> int:
        return int(fresh_host.run("grep -c 'C_SignInit' /tmp/spy.log || true").stdout.strip() or 0)

    def run(tries: int) -> int:
        before = signatures()
        result = resumption(fresh_host, ca, tries)
        assert result.rc == 0, output(result)
        assert counts(result) == {"TLSv1.2": (tries, 0), "TLSv1.3": (tries, 0)}, output(result)
        return signatures() - before

    one = run(1)  # two full handshakes (TLS 1.2 and 1.3) and two resumed ones
    five = run(5)  # the same two full handshakes and ten resumed ones
    assert one >= 2, fresh_host.run("tail -40 /tmp/spy.log").stdout
    assert five == one, f"{five - one} more signatures for 8 more resumed connections"


@pytest.mark.snippet(CHECK, checker="testinfra")
def test_debians_own_defaults_already_resume_sessions_for_300_seconds(fresh_host):
    """What the page's Ubuntu/Debian tab says before the fragment: the untouched site resumes every session."""
    ca = serve_files(fresh_host)
    result = resumption(fresh_host, ca, tries=2)
    assert counts(result) == {"TLSv1.2": (2, 0), "TLSv1.3": (2, 0)}, output(result)
    assert "session ticket lifetime hint from the server: 300 s." in result.stdout, output(result)


@pytest.mark.uses("ihs/apache/apache-tls-session-cache.conf")
@pytest.mark.snippet(ENABLE_CACHE, checker="testinfra")
def test_the_cache_step_comments_out_debians_lines_once_and_keeps_the_original(fresh_host):
    serve_files(fresh_host)
    copy_to(fresh_host, cache_snippet(), CONF)
    first = fresh_host.run_expect([0], f"bash {snippet_path(ENABLE_CACHE)}")
    assert "commented out 3 line(s)" in first.stdout, output(first)
    again = fresh_host.run_expect([0], f"bash {snippet_path(ENABLE_CACHE)}")
    assert "sets no session cache line" in again.stdout, output(again)
    original = f"{DEBIAN_SSL_CONF}.before-tls-session-cache"
    fresh_host.run_expect([0], f"grep -Eq '^[[:space:]]*SSLSessionCache[[:space:]]' {original}")
    assert fresh_host.file("/etc/apache2/conf-enabled/tls-session-cache.conf").is_symlink


@pytest.mark.negative("ihs/apache/enable-session-cache-debian.sh",
                      expects="without the saved fragment the step stops: save the session cache fragment there first")
@pytest.mark.snippet(ENABLE_CACHE, checker="testinfra")
def test_the_cache_step_stops_when_the_fragment_was_not_saved(fresh_host):
    missing = fresh_host.run(f"bash {snippet_path(ENABLE_CACHE)}")
    assert missing.rc == 1, output(missing)
    assert "save the session cache fragment there first" in missing.stderr
    fresh_host.run_expect([0], f"grep -Eq '^[[:space:]]*SSLSessionCache[[:space:]]' {DEBIAN_SSL_CONF}")


@pytest.mark.uses("ihs/apache/check-session-resumption.sh")
def test_a_later_sessioncache_none_does_not_switch_off_the_distributions_cache(fresh_host):
    """Why the page says to comment out the distribution's lines rather than add 'none' after them."""
    ca = serve_files(fresh_host)
    session_config(fresh_host, CACHE_OFF.read_text(encoding="utf-8"), comment_out_distribution_lines=False)
    assert fresh_host.run(f"grep -E '^SSLSessionCache[[:space:]]+shmcb' {DEBIAN_SSL_CONF}").rc == 0
    result = resumption(fresh_host, ca, tries=2)
    assert counts(result) == {"TLSv1.2": (2, 0), "TLSv1.3": (2, 0)}, output(result)


@pytest.mark.negative("ihs/apache/apache-tls-session-cache.conf",
                      expects="a graceful restart that turns the cache off stops httpd; started again, no resumption")
@pytest.mark.uses("ihs/apache/apache-tls-session-cache.conf", "ihs/apache/check-session-resumption.sh",
                  "ihs/apache/enable-session-cache-debian.sh")
def test_a_graceful_restart_that_switches_the_cache_off_stops_httpd(fresh_host):
    """Why the page says stop and start: httpd 2.4.68 (Debian 13) exits, without a log line, on a graceful
    restart that turns a running shmcb cache off; stopped and started, it runs without resumption."""
    ca = serve_files(fresh_host)
    session_config(fresh_host, cache_snippet())
    copy_to(fresh_host, CACHE_OFF.read_text(encoding="utf-8"), CONF)
    fresh_host.run_expect([0], "apache2ctl graceful")
    gone = fresh_host.run("for i in $(seq 50); do pgrep -x apache2 >/dev/null || exit 0; sleep 0.1; done; exit 1")
    assert gone.rc == 0, "httpd survived the graceful restart: check the page's advice\n" + \
        fresh_host.run("tail -5 /var/log/apache2/error.log").stdout
    start(fresh_host)
    after = resumption(fresh_host, ca, tries=2)
    assert after.rc == 1, output(after)
    assert counts(after) == {"TLSv1.3": (0, 2)}, output(after)
