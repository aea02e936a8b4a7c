"""The token site's first users: no failed handshake right after httpd starts or restarts, with no warm-up.

The page's check (snippets/ihs/apache/check-cold-start.sh) sends 16 clients at once, 25 new TLS connections each,
to a token site httpd has just started, and again right after ``apachectl graceful`` (new workers).

With the event MPM (Debian's default), a new worker's first handshake logs in to the token, and the worker's other
threads that need the key wait for that login at most one second (pkcs11-provider 1.0 to 1.2, src/objects.c
``p11prov_obj_refresh`` -> src/session.c ``slot_login``, ``MAX_WAIT``); openCryptoki's login is CPU work (two PBKDF2
derivations of 100,000 rounds). Where the login takes longer, their handshakes fail with "Failed to fetch
login_session". The CI run of stop 50 lost 5 of 400 after a graceful restart while no other test ran, and on a quiet
machine the same check lost up to 5 of 400 in 6 of 23 runs (a start or a graceful restart, then the check) on 27 Nov
2026. No setting of pkcs11-provider removes that limit, so the event MPM gets no test that claims every handshake (a
claim that holds only some of the time would be a flaky test). With the prefork MPM (the page's use-prefork-mpm-
debian.sh) a process serves one connection at a time, so no handshake waits for another's login: every handshake
completes after a start and after a graceful restart, also with the container capped at a quarter of a CPU. The
event MPM on that starved host is the check's negative case for the MPM: it fails and the log names the login session.

The second negative is the page's OpenSSL configuration without ``pkcs11-module-cache-keys = false``, as the page
had it before: pkcs11-provider 1.0 copies the key into a session on a worker's first use of it while it holds the
login session, then asks for the login session again and waits its one-second limit on itself (src/objects.c
``cache_key``, src/session.c ``slot_login``); handshakes that reach that worker meanwhile fail.

On amd64 only. Under qemu-user the s390x host's login itself (PBKDF2-HMAC-SHA-512, emulated there) takes most of
pkcs11-provider's one second, so the event MPM's threads queued behind it time out whatever the configuration: a
property of the emulator, which the page states; the s390x host's sequential checks of the same site run in
test_apache_tls.py.
"""

import pytest

from checks.hosts import amd64_only
from checks.hosts import engine as eng
from checks.hosts.apache import OPENSSL_PKCS11_CONF, TOKEN_KEY, serve_token, start, use_prefork
from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import ok
from zrunbook.shown_output import assert_shown_output

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.SLOW_LOGIN)

CHECK = "ihs/apache/check-cold-start.sh"
CHECK_OUT = "ihs/apache/check-cold-start.out"
CONF = "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf"
PREFORK = "ihs/apache/use-prefork-mpm-debian.sh"
SERVER = "www.example.com"
STARVED_CPUS = "0.25"  # the container's CPU cap for the starved case (docker update --cpus)


def cold_start_check(host, ca: str):
    return host.run(f"CA_FILE={ca} bash /snippets/{CHECK} {SERVER}")


def error_log(host) -> str:
    return host.run("tail -40 /var/log/apache2/error.log").stdout


def serve_token_prefork(host) -> str:
    """The token site, then the page's MPM step and the site step again (a full start)."""
    ca = serve_token(host)
    use_prefork(host)
    return ca


def starve(host) -> None:
    eng.Engine.detect().run("update", "--cpus", STARVED_CPUS, host.zr_container)


@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.snippet(CHECK_OUT, checker="output-regenerated")
@pytest.mark.snippet(CONF, PREFORK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_with_prefork_a_just_started_and_a_gracefully_restarted_token_site_complete_every_handshake(fresh_host):
    ca = serve_token_prefork(fresh_host)  # the site step started httpd; the check follows at once
    first = cold_start_check(fresh_host, ca)
    assert first.rc == 0, first.stdout + first.stderr + error_log(fresh_host)
    assert_shown_output(CHECK_OUT, first.stdout)
    fresh_host.run_expect([0], "apache2ctl graceful")  # new workers; the check follows at once
    again = cold_start_check(fresh_host, ca)
    assert again.rc == 0, again.stdout + again.stderr + error_log(fresh_host)


@pytest.mark.snippet(CHECK, CONF, PREFORK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_with_prefork_a_starved_host_completes_every_handshake_after_a_start_and_a_graceful_restart(fresh_host):
    """The state in which the event MPM fails (the negative below): the container at a quarter of a CPU."""
    ca = serve_token_prefork(fresh_host)
    starve(fresh_host)
    start(fresh_host)
    for when in ("start", "graceful"):
        if when == "graceful":
            fresh_host.run_expect([0], "apache2ctl graceful")
        r = fresh_host.run(f"CA_FILE={ca} CONNECTIONS=3 bash /snippets/{CHECK} {SERVER}")
        assert r.rc == 0, f"after the {when}: " + r.stdout + r.stderr + error_log(fresh_host)
        assert r.stdout.startswith("48 of 48 new TLS connections completed"), r.stdout


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


@pytest.mark.negative("ihs/apache/check-cold-start.sh",
                      expects="with the event MPM the starved host's check fails and the log names the login session")
@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.snippet(CONF, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_on_a_starved_host_with_the_event_mpm_new_workers_fail_while_their_token_login_runs(fresh_host):
    """The page's OpenSSL configuration with Debian's event MPM (the MPM step not run), the container capped at a
    quarter of a CPU: the new workers' logins outlast pkcs11-provider's one-second wait and the threads queued
    behind them fail their handshakes."""
    ca = serve_token(fresh_host)
    assert "event" in ok(fresh_host, "apache2ctl -V | grep 'Server MPM'")
    fresh_host.run_expect([0], "echo 'LogLevel warn ssl:info' > /etc/apache2/conf-enabled/zz-ssl-info.conf")
    starve(fresh_host)
    start(fresh_host)
    r = fresh_host.run(f"CA_FILE={ca} CONNECTIONS=3 bash /snippets/{CHECK} {SERVER}")
    assert r.rc == 1, r.stdout + r.stderr
    assert "handshakes failed; the first:" in r.stderr
    assert "Failed to fetch login_session" in fresh_host.run("cat /var/log/apache2/error.log").stdout


@pytest.mark.negative("ihs/apache/check-cold-start.sh",
                      expects="no server name, CLIENTS=65 or an unreadable CA_FILE stops the check with a sentence")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_the_check_refuses_bad_input_with_a_sentence(host):
    assert "Give the site's server name" in run_snippet(host, CHECK).stderr
    many = host.run(f"CA_FILE=/etc/hostname CLIENTS=65 bash /snippets/{CHECK} {SERVER}")
    assert (many.rc, many.stderr.strip()) == (2, "CLIENTS must be a number from 1 to 64, not '65'.")
    missing = host.run(f"CA_FILE=/nonexistent bash /snippets/{CHECK} {SERVER}")
    assert (missing.rc, missing.stderr.strip()) == (1, "Cannot read CA_FILE=/nonexistent.")


@pytest.mark.negative("ihs/apache/use-prefork-mpm-debian.sh",
                      expects="run as another user the step stops (Run this as root.) and changes nothing")
@pytest.mark.snippet(PREFORK, checker="testinfra")
def test_the_mpm_step_refuses_to_run_as_another_user_and_changes_nothing(host):
    before = ok(host, "ls /etc/apache2/mods-enabled")
    r = host.run(f"runuser -u www-data -- bash {snippet_path(PREFORK)}")
    assert (r.rc, r.stderr.strip()) == (1, "Run this as root."), r.stdout + r.stderr
    assert ok(host, "ls /etc/apache2/mods-enabled") == before
