"""Day two, rotating the user PIN of the token an Apache token site uses (docs/how-to/rotate-token-pin.md).

On a token site (checks/hosts/apache.py TOKEN_KEY, the test PINs of checks/hosts/token.py): the rotation
(snippets/daytwo/rotate-token-pin.sh), then its outcome check (check-pin-rotated.sh: the new PIN logs in, the old
one is refused, the good login clears the count; its flag lines are the page's shown output) and the key check of
the served certificate with the new PIN. Negatives: a wrong current PIN changes nothing and costs one failed login,
not a lock; the outcome check fails on a token whose PIN was not changed; a PIN file left with the old PIN is found
by check-pin-file.sh with no login, while the key check verify runs passes on that host (it logs in with the PIN
given to verify, not the file's), and after httpd's next start, which the old PIN stops, the same key check does
not log in (the flags show httpd's failed login); and a graceful reload instead of a stop and start keeps the old
PIN in httpd (its new workers fail their handshakes and count failed logins), which check-pin-file.sh also finds
first; and a worker started before a change by hand but not used yet fails its first handshake (it logs in then).

On amd64 only: the PIN handling is openCryptoki's common code (C_SetPIN, the failed-login flags of sess_mgr.c) for
the soft and the ICA token alike, and httpd's reading of the PIN file does not depend on the architecture.
"""

import pytest

from checks.hosts import amd64_only
from checks.hosts.apache import PIN_FILE, TOKEN_KEY, graceful, serve_token
from checks.hosts.pin_state import (
    COUNT_LOW,
    FAILED,
    NEW,
    OLD,
    WRONG,
    assert_one_worker_process,
    flags,
    handshake,
    in_service,
    one_worker_process,
)
from checks.hosts.steps import snippet_path
from checks.hosts.token import ADMIN, slot_of
from checks.hosts.util import ok, output
from zrunbook.shown_output import assert_shown_output

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SHA256)

ROTATE = "daytwo/rotate-token-pin.sh"
ROTATED = "daytwo/check-pin-rotated.sh"
ROTATED_OUT = "daytwo/check-pin-rotated.out"
PIN_FILE_CHECK = "daytwo/check-pin-file.sh"
CHECK_KEY = "crypto/verify/check-key-in-token.sh"
SITE_STEP = "ihs/apache/enable-tls-site-debian.sh"


def no_pin_in(result) -> None:
    for pin in (OLD, NEW, WRONG):
        assert pin not in result.stdout + result.stderr, "a snippet printed a PIN"


def rotate(host, current: str, new: str = NEW):
    result = host.run(f"TOKEN_USER_PIN={current} NEW_TOKEN_USER_PIN={new} TOKEN_ADMIN={ADMIN} "
                      f"bash {snippet_path(ROTATE)} </dev/null")
    no_pin_in(result)
    return result


def pin_file_check(host, pin: str):
    result = host.run(f"TOKEN_USER_PIN={pin} bash {snippet_path(PIN_FILE_CHECK)}")
    no_pin_in(result)
    return result


def key_check(host, pin: str):
    """The key step verify runs on an Apache host (as httpd's user, with the PIN given to verify)."""
    env = f"TOKEN_USER_PIN={pin} SLOT={slot_of(host)} SERVER_NAME=www.example.com"
    return host.run(f"runuser -u www-data -- env {env} bash {snippet_path(CHECK_KEY)} localhost:443")


def logs_in(host, pin: str) -> bool:
    return host.run(f"PKCS11_USER_PIN={pin} p11sak list-key private --slot {slot_of(host)}").rc == 0


def change_by_hand(host) -> None:
    """The token's PIN changed with pkcsconf alone, as someone might without the page: nothing else."""
    ok(host, f"printf '%s\\n%s\\n%s\\n' {OLD} {NEW} {NEW} | pkcsconf -c {slot_of(host)} -p")
    assert logs_in(host, NEW)


@pytest.mark.negative("daytwo/rotate-token-pin.sh",
                      expects="after the rotation the old PIN is refused (one failed login)")
@pytest.mark.snippet(ROTATE, ROTATED, PIN_FILE_CHECK, CHECK_KEY, checker="testinfra")
@pytest.mark.snippet(ROTATED_OUT, checker="output-regenerated")
@pytest.mark.from_state(TOKEN_KEY)
def test_after_the_rotation_the_new_pin_logs_in_the_old_one_is_refused_and_the_site_serves(fresh_host):
    host = fresh_host
    ca = serve_token(host)
    pid_before = ok(host, "cat /run/apache2/apache2.pid").strip()
    rotated = rotate(host, OLD)
    assert rotated.rc == 0, output(rotated)
    assert ok(host, "cat /run/apache2/apache2.pid").strip() != pid_before  # stopped and started, not reloaded
    assert ok(host, f"stat -c '%a %U' {PIN_FILE}").strip() == "600 root"
    assert flags(host) & FAILED == 0
    assert handshake(host, ca).rc == 0
    # the outcome check: new PIN, old PIN (one failed login), new PIN again (cleared), with the flags after each
    check = host.run(f"TOKEN_USER_PIN={NEW} OLD_TOKEN_USER_PIN={OLD} bash {snippet_path(ROTATED)}")
    no_pin_in(check)
    print("\n" + check.stdout)
    assert check.rc == 0, output(check)
    lines = check.stdout.splitlines()
    assert "USER_PIN_COUNT_LOW" in lines[3], check.stdout
    assert "USER_PIN_COUNT_LOW" not in lines[4], check.stdout
    assert_shown_output(ROTATED_OUT, check.stdout)
    assert flags(host) & FAILED == 0
    assert pin_file_check(host, NEW).rc == 0
    served = key_check(host, NEW)
    assert served.rc == 0, output(served)


@pytest.mark.negative("daytwo/rotate-token-pin.sh",
                      expects="a wrong current PIN changes nothing and costs one failed login")
@pytest.mark.snippet(ROTATE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_wrong_current_pin_changes_nothing_and_costs_one_failed_login(fresh_host):
    host = fresh_host
    ca = serve_token(host)
    pid, pin_file = ok(host, "cat /run/apache2/apache2.pid"), ok(host, f"sha256sum {PIN_FILE}")
    refused = rotate(host, WRONG)
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith("rotate-token-pin: token IBMICATOK refused the current PIN in TOKEN_USER_PIN"), \
        output(refused)
    after = flags(host)
    print(f"\nflags after the refused rotation: {after:#x}")
    assert after & FAILED == COUNT_LOW  # one failed login counted, not FINAL_TRY, not LOCKED
    assert ok(host, "cat /run/apache2/apache2.pid") == pid  # httpd not touched
    assert ok(host, f"sha256sum {PIN_FILE}") == pin_file
    assert handshake(host, ca).rc == 0
    assert logs_in(host, OLD)  # the PIN is the old one still, and this good login clears the count
    assert flags(host) & FAILED == 0


def at_count_low(host) -> None:
    """One wrong login, as a service with a wrong PIN would make: the token shows USER_PIN_COUNT_LOW only."""
    assert not logs_in(host, WRONG)
    assert flags(host) & FAILED == COUNT_LOW


@pytest.mark.negative("daytwo/rotate-token-pin.sh",
                      expects="at USER_PIN_COUNT_LOW the rotation refuses and makes no login (review M-7)")
@pytest.mark.snippet(ROTATE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.parametrize("current", ["good", "wrong"])
def test_at_count_low_the_rotation_refuses_and_makes_no_login(fresh_host, current):
    """With the good current PIN a login would clear the count, with a wrong one it would set USER_PIN_FINAL_TRY:
    the count staying exactly USER_PIN_COUNT_LOW shows that no login was made, with either PIN."""
    host = fresh_host
    ca = serve_token(host)
    at_count_low(host)
    pid, pin_file = ok(host, "cat /run/apache2/apache2.pid"), ok(host, f"sha256sum {PIN_FILE}")
    refused = rotate(host, OLD if current == "good" else WRONG)
    assert refused.rc == 1, output(refused)
    assert "shows USER_PIN_COUNT_LOW" in refused.stderr, output(refused)
    assert "clear-pin-count.sh" in refused.stderr, output(refused)
    assert "no login was made" in refused.stderr, output(refused)
    assert flags(host) & FAILED == COUNT_LOW, f"{flags(host):#x}"
    assert ok(host, "cat /run/apache2/apache2.pid") == pid  # httpd not touched
    assert ok(host, f"sha256sum {PIN_FILE}") == pin_file
    assert handshake(host, ca).rc == 0


@pytest.mark.negative("daytwo/check-pin-rotated.sh",
                      expects="the check fails where the PIN was not changed, at the cost of one failed login")
@pytest.mark.snippet(ROTATED, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_outcome_check_fails_where_the_pin_was_not_changed_and_counts_one_failed_login(fresh_host):
    host = fresh_host
    serve_token(host)
    check = host.run(f"TOKEN_USER_PIN={NEW} OLD_TOKEN_USER_PIN={OLD} bash {snippet_path(ROTATED)}")
    no_pin_in(check)
    assert check.rc == 1, output(check)
    assert "refuses the new PIN in TOKEN_USER_PIN" in check.stderr, output(check)
    assert flags(host) & FAILED == COUNT_LOW
    again = host.run(f"TOKEN_USER_PIN={NEW} OLD_TOKEN_USER_PIN={OLD} bash {snippet_path(ROTATED)}")
    assert again.rc == 1, output(again)
    assert "not logging in" in again.stderr, output(again)
    assert flags(host) & FAILED == COUNT_LOW  # flags first: the second run did not log in


@pytest.mark.negative("daytwo/check-pin-file.sh", expects="the PIN-file check finds the old PIN without a login")
@pytest.mark.snippet(PIN_FILE_CHECK, CHECK_KEY, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_pin_file_left_with_the_old_pin_is_found_without_a_login_and_verifys_key_check_only_after_httpd_failed(
        fresh_host):
    host = fresh_host
    # every worker logged in: one worker process, in service (which of several workers a handshake reaches cannot be
    # steered; a worker that has not served yet is the next test's case)
    one_worker_process(host)
    in_service(host, serve_token(host))
    assert_one_worker_process(host)
    change_by_hand(host)  # the PIN file still holds the old PIN; httpd still runs, its worker logged in
    before = flags(host)
    stale = pin_file_check(host, NEW)
    assert stale.rc == 1, output(stale)
    assert stale.stderr.startswith(f"check-pin-file: the PIN file {PIN_FILE} does not hold the user PIN"), output(stale)
    assert before & FAILED == 0
    assert flags(host) == before  # found with no login
    # verify's key check on this host passes: it logs in with the PIN verify was given, and the running workers serve
    passing = key_check(host, NEW)
    assert passing.rc == 0, output(passing)
    assert flags(host) == before
    # httpd's next start: the parent logs in with the file's old PIN, is refused, and httpd does not start
    start = host.run(f"bash {snippet_path(SITE_STEP)}")
    assert start.rc != 0, output(start)
    counted = flags(host)
    print(f"\nflags after httpd's start with the old PIN file: {counted:#x}")
    assert counted & FAILED == COUNT_LOW
    # the same key check now reads the flags and does not log in (exit 4): no second failed login from verify
    held = key_check(host, NEW)
    assert held.rc == 4, output(held)
    assert flags(host) == counted


@pytest.mark.negative("crypto/verify/check-key-in-token.sh",
                      expects="the key check names the handshake a worker could not sign")
@pytest.mark.snippet(CHECK_KEY, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_verifys_key_check_fails_where_a_worker_cannot_sign_and_says_why(fresh_host):
    """A worker that had not served when the PIN changed by hand logs in, on the key check's handshake, with the PIN
    file's old PIN and breaks the handshake off (TLS internal_error). The check must fail there, not read it as a
    server without a certificate of that key type (its discovery did, until a fresh-clone CI run met it)."""
    host = fresh_host
    serve_token(host)  # httpd started, no handshake yet: no worker logged in
    change_by_hand(host)
    assert flags(host) & FAILED == 0
    checked = key_check(host, NEW)
    print(f"\n{checked.stderr}")
    assert checked.rc == 1, output(checked)
    assert "broke off the handshake (TLS alert internal error): the server could not sign" in checked.stderr, \
        output(checked)
    assert "check-pin-file.sh" in checked.stderr
    assert "No further handshake was made" in checked.stderr
    assert flags(host) & FAILED == COUNT_LOW  # one failed login, the worker's with the old PIN: not the check's own


@pytest.mark.negative("daytwo/check-pin-file.sh", expects="the PIN-file check finds the old PIN a graceful reload kept")
@pytest.mark.snippet(PIN_FILE_CHECK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_graceful_reload_keeps_the_old_pin_which_the_pin_file_check_finds_first(fresh_host):
    host = fresh_host
    ca = serve_token(host)
    in_service(host, ca)
    change_by_hand(host)
    ok(host, f"umask 077 && printf %s {NEW} > {PIN_FILE}")
    stale = pin_file_check(host, NEW)
    assert stale.rc == 1, output(stale)
    assert "before /etc/ssl/private/apache-token.pin was last written" in stale.stderr, output(stale)
    assert flags(host) & FAILED == 0
    graceful(host)
    failed = [handshake(host, ca).rc for _ in range(2)]
    counted = flags(host)
    print(f"\nafter the graceful reload: handshakes rc {failed}, flags {counted:#x}")
    assert all(rc != 0 for rc in failed), failed
    assert counted & FAILED != 0  # each new worker logged in with the PIN httpd's parent read at its start


@pytest.mark.negative("daytwo/check-pin-file.sh",
                      expects="after a PIN change by hand the PIN file check fails, before any login")
@pytest.mark.snippet(PIN_FILE_CHECK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_worker_that_had_not_served_yet_fails_its_first_handshake_after_a_change_by_hand(fresh_host):
    """Why the rotation stops httpd before the change: a worker logs in on its first handshake, not when it starts."""
    host = fresh_host
    ca = serve_token(host)  # httpd started, no handshake yet
    change_by_hand(host)
    assert flags(host) & FAILED == 0
    assert pin_file_check(host, NEW).rc == 1  # found before the handshake, without a login
    first = handshake(host, ca)
    counted = flags(host)
    print(f"\nfirst handshake after the change: rc {first.rc}, flags {counted:#x}")
    assert first.rc != 0, first.stdout
    assert counted & FAILED == COUNT_LOW
