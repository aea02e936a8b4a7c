"""The token site's first users: no failed handshake right after httpd starts or restarts, with no warm-up.

The page's check (snippets/ihs/apache/check-cold-start.sh) sends 16 clients at once, 25 new TLS connections each,
to a token site httpd has just started, and again right after ``apachectl graceful`` (new workers). With the
page's OpenSSL configuration (``pkcs11-module-cache-keys = false``) all 400 complete both times. The negative
case is the same configuration without that line, as the page had it before: pkcs11-provider 1.0 copies the key
into a session on a worker's first use of it while it holds the login session, then asks for the login session
again to refresh the key's handle (invalid after the fork) and waits its one-second limit on itself
(src/objects.c ``cache_key``, src/session.c ``slot_login``); the handshakes that reach that worker meanwhile fail
with "Failed to fetch login_session", and the check must fail.

A third test shows the limit the configuration cannot remove: pkcs11-provider (1.0 to 1.2, src/session.c
``MAX_WAIT``) waits at most one second for another thread's token login, and openCryptoki's login is CPU work
(the PBKDF2 below). With the container's CPU capped, the logins of new workers take longer than that and their
first concurrent handshakes fail, the log naming the login session: the page states it. So the first test,
which claims the configuration on a host with CPU to spare, runs while no other test runs on the machine
(``exclusive_cpu``): on the 2-core CI machine, a parallel test once left a new worker's login short of CPU and one
of 400 handshakes failed.

On amd64 only. Under qemu-user the s390x host's login itself (openCryptoki 3.23 derives two keys from the PIN
with 100,000 rounds of PBKDF2-HMAC-SHA-512 each, emulated there) takes most of pkcs11-provider's one second, so
threads queued behind it time out whatever the configuration: a property of the emulator, which the page
states; the s390x host's sequential checks of the same site run in test_apache_tls.py.
"""

import pytest

from checks.hosts import amd64_only
from checks.hosts import engine as eng
from checks.hosts.apache import OPENSSL_PKCS11_CONF, TOKEN_KEY, serve_token, start
from checks.hosts.steps import run_snippet
from zrunbook.shown_output import assert_shown_output

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.SLOW_LOGIN)

CHECK = "ihs/apache/check-cold-start.sh"
CHECK_OUT = "ihs/apache/check-cold-start.out"
CONF = "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf"
SERVER = "www.example.com"
STARVED_CPUS = "0.25"  # the container's CPU cap for the starved case (docker update --cpus)


def cold_start_check(host, ca: str):
    return host.run(f"CA_FILE={ca} bash /snippets/{CHECK} {SERVER}")


def error_log(host) -> str:
    return host.run("tail -40 /var/log/apache2/error.log").stdout


@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.snippet(CHECK_OUT, checker="output-regenerated")
@pytest.mark.snippet(CONF, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.exclusive_cpu("a new worker's token login must finish within pkcs11-provider's one second; the "
                           "starved case is test_on_a_starved_host_new_workers_fail_while_their_token_login_runs")
def test_a_just_started_and_a_gracefully_restarted_token_site_complete_every_handshake(fresh_host):
    ca = serve_token(fresh_host)  # the page's site step starts httpd; the check follows at once
    first = cold_start_check(fresh_host, ca)
    assert first.rc == 0, first.stdout + first.stderr + error_log(fresh_host)
    assert_shown_output(CHECK_OUT, first.stdout)
    fresh_host.run_expect([0], "apache2ctl graceful")  # new workers; the check follows at once
    again = cold_start_check(fresh_host, ca)
    assert again.rc == 0, again.stdout + again.stderr + error_log(fresh_host)


@pytest.mark.negative("ihs/apache/check-cold-start.sh", expects="the check fails and the log names the login session")
@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_with_key_caching_left_on_the_check_fails_and_the_log_names_the_login_session(fresh_host):
    ca = serve_token(fresh_host)
    fresh_host.run_expect([0], f"sed -i '/^pkcs11-module-cache-keys/d' {OPENSSL_PKCS11_CONF}"
                               f" && ! grep -q cache-keys {OPENSSL_PKCS11_CONF}"
                               " && echo 'LogLevel warn ssl:info' > /etc/apache2/conf-enabled/zz-ssl-info.conf")
    start(fresh_host)  # stop and start with the page's site step: new workers with the old configuration
    r = cold_start_check(fresh_host, ca)
    assert r.rc == 1, r.stdout + r.stderr
    assert "handshakes failed; the first:" in r.stderr
    assert "Failed to fetch login_session" in fresh_host.run("cat /var/log/apache2/error.log").stdout


@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.snippet(CONF, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_on_a_starved_host_new_workers_fail_while_their_token_login_runs(fresh_host):
    """The page's configuration, the container capped at a quarter of a CPU: the new workers' logins outlast
    pkcs11-provider's one-second wait and the threads queued behind them fail their handshakes."""
    ca = serve_token(fresh_host)
    fresh_host.run_expect([0], "echo 'LogLevel warn ssl:info' > /etc/apache2/conf-enabled/zz-ssl-info.conf")
    eng.Engine.detect().run("update", "--cpus", STARVED_CPUS, fresh_host.zr_container)
    start(fresh_host)
    r = fresh_host.run(f"CA_FILE={ca} CONNECTIONS=3 bash /snippets/{CHECK} {SERVER}")
    assert r.rc == 1, r.stdout + r.stderr
    assert "handshakes failed; the first:" in r.stderr
    assert "Failed to fetch login_session" in fresh_host.run("cat /var/log/apache2/error.log").stdout


@pytest.mark.snippet(CHECK, checker="testinfra")
def test_the_check_refuses_bad_input_with_a_sentence(host):
    assert "Give the site's server name" in run_snippet(host, CHECK).stderr
    many = host.run(f"CA_FILE=/etc/hostname CLIENTS=65 bash /snippets/{CHECK} {SERVER}")
    assert (many.rc, many.stderr.strip()) == (2, "CLIENTS must be a number from 1 to 64, not '65'.")
    missing = host.run(f"CA_FILE=/nonexistent bash /snippets/{CHECK} {SERVER}")
    assert (missing.rc, missing.stderr.strip()) == (1, "Cannot read CA_FILE=/nonexistent.")
