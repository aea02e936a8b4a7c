"""check-token-site-files.sh on the Apache token site: with a dead, unreaped httpd beside the running one (issue 42,
item 10): in a container started without an init, an httpd that ended stays a zombie named apache2, older than the
running parent. The check finds the live parent and passes; the check as it was (checks/ihs/bad/) read the
zombie's environment, which is gone, and stopped with "No such process".

On amd64 only: process selection does not depend on the architecture.
"""

from pathlib import Path

import pytest

from checks.hosts.apache import PIN_FILE, TOKEN_KEY, put, serve_token, start
from checks.hosts.pin_state import NEW, OLD, flags
from checks.hosts.steps import snippet_path
from checks.hosts.token import ADMIN, LABEL, slot_of
from checks.hosts.util import ok, output

CHECK = "ihs/apache/check-token-site-files.sh"
BAD = Path(__file__).resolve().parent / "bad"
# A process named apache2 that ends at once under a parent that never reaps it: a zombie, as an httpd parent
# left behind in a container without an init.
ZOMBIE = """
import os, time
if os.fork() == 0:
    os.execv("/tmp/zombie/apache2", ["apache2"])
time.sleep(600)
"""


@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_dead_unreaped_httpd_beside_the_running_one_does_not_fail_the_check(fresh_host):
    host = fresh_host
    serve_token(host)
    ok(host, "apache2ctl stop; for i in $(seq 100); do pgrep -x apache2 >/dev/null || exit 0; sleep 0.1; done; exit 1")
    put(host, "/tmp/zombie.py", ZOMBIE)
    ok(host, "mkdir -p /tmp/zombie && cp /bin/true /tmp/zombie/apache2 && "
             "(setsid python3 /tmp/zombie.py </dev/null >/dev/null 2>&1 &) && "
             "for i in $(seq 50); do ps -o stat= -C apache2 | grep -q Z && exit 0; sleep 0.1; done; exit 1")
    start(host)  # the page's site step: httpd runs again, younger than the zombie
    states = ok(host, "ps -o pid=,stat=,comm= -C apache2")
    assert "Z" in states, states
    checked = host.run(f"bash {snippet_path(CHECK)}")
    assert checked.rc == 0, output(checked)
    parent = ok(host, "cat /run/apache2/apache2.pid").strip()
    assert checked.stdout.startswith(f"httpd (pid {parent}) uses "), output(checked)
    put(host, "/tmp/old-check.sh", (BAD / "check-token-site-files-reads-the-oldest-apache2.sh").read_text())
    old = host.run("bash /tmp/old-check.sh")
    assert old.rc == 1, output(old)
    assert "/environ: No such process" in old.stderr, output(old)  # the zombie's environment is gone


def check(host):
    return host.run(f"bash {snippet_path(CHECK)}")


@pytest.mark.negative("ihs/apache/check-token-site-files.sh",
                      expects="the check fails without logging in when the PIN changed behind the PIN file or httpd")
@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_pin_changed_behind_the_pin_file_or_httpd_fails_the_check_which_logs_in_to_nothing(fresh_host):
    """Issue 42, item 8: after a PIN change by hand (pkcsconf -p, as the token administrator, nothing else) the site
    still serves and every login-free check passed; this one fails, naming the PIN file and httpd. With the file
    rewritten but httpd not restarted, it names httpd alone. The page's fix (stop and start) makes it pass. The
    token's flags are the same before and after each run of the check: it made no login."""
    host = fresh_host
    serve_token(host)
    good = check(host)
    assert good.rc == 0, output(good)
    assert f"token {LABEL}'s PIN is older than the PIN file and than httpd's start" in good.stdout, output(good)
    ok(host, f"printf '%s\\n%s\\n%s\\n' {OLD} {NEW} {NEW} | runuser -u {ADMIN} -- pkcsconf -c {slot_of(host)} -p")
    before = flags(host)
    stale = check(host)
    assert flags(host) == before, "the check changed the token's PIN counters"
    assert stale.rc == 1, output(stale)
    assert f"the user PIN of token {LABEL} changed" in stale.stderr, output(stale)
    assert f"after the PIN file {PIN_FILE} was written: it holds an old PIN" in stale.stderr, output(stale)
    assert "after httpd (pid" in stale.stderr, output(stale)
    ok(host, f"printf %s {NEW} > {PIN_FILE}")  # the file rewritten, httpd not restarted
    held = check(host)
    assert held.rc == 1, output(held)
    assert "it holds an old PIN" not in held.stderr, output(held)
    assert "started: httpd holds the old PIN and each new worker's login fails" in held.stderr, output(held)
    start(host)  # the page's site step: stop and start
    fixed = check(host)
    assert fixed.rc == 0, output(fixed)


# httpd's start to 0.01 s (the boot time from /proc/uptime) and the token's last user-PIN change (MK_USER's mtime).
START_AND_CHANGE = ("pid=$(cat /run/apache2/apache2.pid); read -r up _ </proc/uptime; now=$(date +%s.%N); "
                    "ticks=$(awk '{ sub(/^.*\\) /, \"\"); print $20 }' /proc/$pid/stat); "
                    "awk -v t=$ticks -v hz=$(getconf CLK_TCK) -v now=$now -v up=$up "
                    "'BEGIN { printf \"%.2f \", now - up + t / hz }'; stat -c %.2Y /var/lib/opencryptoki/*/MK_USER")


@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_pin_changed_in_the_second_before_httpd_started_passes_the_check(fresh_host):
    """The PIN rotation's order: the PIN changed, the file written, httpd started at once, all within a second. The
    check read httpd's start from /proc/stat's btime, which is cut to the whole second, so such a start could read as
    up to a second earlier and the PIN as changed after it: a fresh-clone CI run of the verify PIN tests met that
    false alarm. The gap is printed; the check as it was failed whenever the boot time's fraction exceeded it."""
    host = fresh_host
    serve_token(host)
    ok(host, "apache2ctl stop; for i in $(seq 100); do pgrep -x apache2 >/dev/null || exit 0; sleep 0.1; done; exit 1")
    ok(host, f"printf '%s\\n%s\\n%s\\n' {OLD} {NEW} {NEW} | runuser -u {ADMIN} -- pkcsconf -c {slot_of(host)} -p")
    ok(host, f"printf %s {NEW} > {PIN_FILE}")
    start(host)
    started, changed = (float(v) for v in ok(host, START_AND_CHANGE).split())
    print(f"\nhttpd started {started - changed:.2f} s after the PIN change as run")
    assert started > changed, (started, changed)
    # The three commands take well under a second on a quiet machine but 1.7 s were met under a full CI run, which
    # is not the state under test. So the times are set, in the rotation's order, inside the second before httpd's
    # start (the PIN change 0.30 s before it, the file 0.20 s): the state is made, not raced for.
    ok(host, f"touch -d @{started - 0.30:.2f} /var/lib/opencryptoki/*/MK_USER && "
             f"touch -d @{started - 0.20:.2f} {PIN_FILE}")
    started, changed = (float(v) for v in ok(host, START_AND_CHANGE).split())
    assert 0 < started - changed < 1, (started, changed)  # within the second the old check could misread
    checked = check(host)
    assert checked.rc == 0, output(checked)
