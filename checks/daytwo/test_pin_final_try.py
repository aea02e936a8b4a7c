"""A token at USER_PIN_FINAL_TRY on the Apache token site, tested from that state (issue 42, item 1).

pkcs11-provider 1.0 (Debian 13) reads the token's flags before every login and refuses one at
USER_PIN_FINAL_TRY with CKR_CANCEL, the good PIN too (``check_pin_flags_ok`` in its src/session.c). So the old
advice, "one good login clears the flag: restart one service and check that it serves", fails on this site: httpd
does not start with the good PIN file, and a graceful reload's new workers fail their handshakes. The page's
recovery (daytwo/clear-pin-count.sh: the wrong-PIN holder stopped, one login with the good PIN as the token
administrator, a pkcs11 member, not root) clears the flag, and httpd starts and serves. Negatives: the recovery run
as root stops before any login; with a wrong PIN it locks the token and says so. A stale PIN file that a service
manager restarts with ends at USER_PIN_FINAL_TRY, not at a lock: the provider makes no third login.

On amd64 only: the flags are openCryptoki's common code (sess_mgr.c) for the soft and the ICA token alike, and the
provider's check does not depend on the architecture.
"""

import pytest

from checks.hosts import amd64_only
from checks.hosts.apache import PIN_FILE, TOKEN_KEY, graceful, serve_token
from checks.hosts.pin_state import FAILED, FINAL_TRY, LOCKED, NEW, OLD, WRONG, flags, handshake, in_service
from checks.hosts.steps import snippet_path
from checks.hosts.token import ADMIN, slot_of, token_admin
from checks.hosts.util import ok, output
from zrunbook.shown_output import assert_shown_output

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SHA256)

CLEAR = "daytwo/clear-pin-count.sh"
CLEAR_OUT = "daytwo/clear-pin-count.out"
SITE_STEP = "ihs/apache/enable-tls-site-debian.sh"
ADD_USER = "crypto/pkcs11-group/add-user-to-pkcs11-group.sh"
# What httpd's error log shows when pkcs11-provider 1.0 cancels the parent's login at USER_PIN_FINAL_TRY: mod_ssl's
# lookup of the key failed, not why (the provider's "Only one auth attempt left on token" does not reach the log).
LOOKUP_FAILED = "AH10492: Init: OSSL_STORE_INFO_PKEY lookup failed for private key identifier"


def wrong_pin_holder(host) -> None:
    """A stand-in for whoever holds a wrong PIN (a service's stale environment, a script): one refused login."""
    host.run(f"runuser -u www-data -- env PKCS11_USER_PIN={WRONG} p11sak list-key private --slot {slot_of(host)}")


def at_final_try(host) -> str:
    """The token site in service, then two wrong logins: the token at USER_PIN_FINAL_TRY. Returns the test CA."""
    ca = serve_token(host)
    in_service(host, ca)
    for _ in range(2):
        wrong_pin_holder(host)
    assert flags(host) & FAILED == FINAL_TRY, f"{flags(host):#x}"
    return ca


def clear(host, pin: str, user: str = ADMIN):
    prefix = f"runuser -u {user} -- env" if user != "root" else "env"
    result = host.run(f"{prefix} TOKEN_USER_PIN={pin} bash {snippet_path(CLEAR)} </dev/null")
    for secret in (OLD, NEW, WRONG):
        assert secret not in result.stdout + result.stderr, "a snippet printed a PIN"
    return result


@pytest.mark.negative("ihs/apache/enable-tls-site-debian.sh",
                      expects="at the final try the restart with the good PIN fails: Fatal error initialising mod_ssl")
@pytest.mark.snippet(CLEAR, checker="testinfra")
@pytest.mark.snippet(CLEAR_OUT, checker="output-regenerated")
@pytest.mark.snippet(SITE_STEP, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_at_final_try_httpd_fails_with_the_good_pin_until_the_pages_recovery_clears_the_flag(fresh_host):
    host = fresh_host
    ca = at_final_try(host)
    # A graceful reload: the new workers' logins are cancelled, their handshakes fail (the good PIN file unchanged).
    graceful(host)
    reloaded = handshake(host, ca)
    assert reloaded.rc != 0, output(reloaded)
    # The old advice: restart the service with the good PIN. httpd does not start, and nothing clears the flag.
    restart = host.run(f"bash {snippet_path(SITE_STEP)}")
    assert restart.rc != 0, output(restart)
    log = ok(host, "cat /var/log/apache2/error.log")
    last = log[log.rindex("AH00491"):]  # the start after the stop
    assert LOOKUP_FAILED in last, last
    assert "Fatal error initialising mod_ssl" in last, last
    assert "auth attempt" not in log  # the cause is not in the log: the page says to read the token's flags
    print("\nhttpd's error log at the final try:\n" + "\n".join(
        line for line in last.splitlines() if "AH10492" in line or "Fatal error" in line))
    assert flags(host) & FAILED == FINAL_TRY  # the provider made no login: not locked, not cleared
    # The recovery: the wrong-PIN holder is stopped (the stand-in is not run again); the token administrator logs in
    # once with the good PIN; then httpd starts and serves.
    token_admin(host)
    cleared = clear(host, OLD)
    assert cleared.rc == 0, output(cleared)
    print("\n" + cleared.stdout)
    assert_shown_output(CLEAR_OUT, cleared.stdout)
    assert flags(host) & FAILED == 0
    started = host.run(f"bash {snippet_path(SITE_STEP)}")
    assert started.rc == 0, output(started)
    assert handshake(host, ca).rc == 0
    assert flags(host) & FAILED == 0


@pytest.mark.negative("daytwo/clear-pin-count.sh",
                      expects="the recovery refuses root, and with a wrong PIN says the token is now locked")
@pytest.mark.snippet(CLEAR, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_recovery_refuses_root_and_with_a_wrong_pin_says_the_token_is_now_locked(fresh_host):
    host = fresh_host
    at_final_try(host)
    as_root = clear(host, OLD, user="root")
    assert as_root.rc == 1, output(as_root)
    assert "not as root" in as_root.stderr, output(as_root)
    token_admin(host)
    outside = host.run(f"useradd --system --no-create-home outsider && runuser -u outsider -- env "
                       f"TOKEN_USER_PIN={OLD} bash {snippet_path(CLEAR)}")
    assert outside.rc == 1, output(outside)
    assert "is not a member of the group pkcs11" in outside.stderr, output(outside)
    assert flags(host) & FAILED == FINAL_TRY  # neither made a login
    wrong = clear(host, WRONG)
    assert wrong.rc == 1, output(wrong)
    assert "that was its last try: the user PIN is now locked" in wrong.stderr, output(wrong)
    assert flags(host) & LOCKED
    again = clear(host, OLD)
    assert again.rc == 1, output(again)
    assert "A login cannot clear that" in again.stderr, output(again)


@pytest.mark.snippet(CLEAR, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_recovery_on_a_clean_token_makes_no_login(fresh_host):
    host = fresh_host
    serve_token(host)
    token_admin(host)
    clean = clear(host, WRONG)  # a wrong PIN would count if it were used
    assert clean.rc == 0, output(clean)
    assert "nothing to clear" in clean.stdout
    assert flags(host) & FAILED == 0


@pytest.mark.snippet(SITE_STEP, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_restarts_with_a_stale_pin_file_stop_at_final_try_not_at_a_lock(fresh_host):
    """A service manager restarting httpd with a PIN file that holds a wrong PIN: the first two starts each count a
    failed login; from the third on pkcs11-provider cancels the login at USER_PIN_FINAL_TRY, so the token is not
    locked, and httpd stays down until the PIN file is right and the count is cleared."""
    host = fresh_host
    serve_token(host)
    ok(host, f"printf '%s' {WRONG} > {PIN_FILE}")
    seen = []
    for _ in range(4):
        start = host.run(f"bash {snippet_path(SITE_STEP)}")
        assert start.rc != 0, output(start)
        seen.append(flags(host) & FAILED)
    print("\nflags after each start with the stale PIN file: " + ", ".join(f"{f:#x}" for f in seen))
    assert seen[:2] == [0x10000, FINAL_TRY], seen
    assert seen[2:] == [FINAL_TRY, FINAL_TRY], seen
