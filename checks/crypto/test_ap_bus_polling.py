"""AP bus: adapter interrupts instead of the polling thread (the JSSE study's advice), on the s390x host.

The container has no AP bus, so the snippet's stop is checked for real, and its decisions are checked
against a stand-in AP bus directory with recording stand-ins for lszcrypt and chzcrypt on PATH; `lszcrypt
-b` without adapters is regenerated from the host.
"""

import pytest

from checks.hosts.steps import snippet_path
from zrunbook.shown_output import assert_shown_output

pytestmark = pytest.mark.only_hosts("debian13-s390x")
SNIPPET = "crypto/adapters/prefer-ap-interrupts.sh"
FAKE = """mkdir -p /tmp/ap /tmp/bin
echo {interrupts} > /tmp/ap/ap_interrupts; echo {poll} > /tmp/ap/poll_thread
cat > /tmp/bin/chzcrypt <<'SH'
#!/bin/sh
echo "chzcrypt $*" >> /tmp/calls
[ "$1" = -n ] && echo 0 > /tmp/ap/poll_thread
[ "$1" = -p ] && echo 1 > /tmp/ap/poll_thread
exit 0
SH
printf '#!/bin/sh\\necho "poll_thread=$(cat /tmp/ap/poll_thread)"\\n' > /tmp/bin/lszcrypt
chmod +x /tmp/bin/*; : > /tmp/calls"""


def run(host, env: str = ""):
    return host.run(f"PATH=/tmp/bin:$PATH AP_BUS=/tmp/ap {env} bash {snippet_path(SNIPPET)}")


@pytest.mark.negative("crypto/adapters/prefer-ap-interrupts.sh",
                      expects="without an AP bus the step stops: No AP bus in /sys/bus/ap")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_prefer_interrupts_stops_with_a_sentence_when_there_is_no_ap_bus(host):
    result = host.run(f"bash {snippet_path(SNIPPET)}")
    assert result.rc == 1
    assert "No AP bus in /sys/bus/ap" in result.stderr


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_polling_thread_is_turned_off_once_when_interrupts_are_available(fresh_host):
    fresh_host.run_expect([0], FAKE.format(interrupts=1, poll=1))
    first, second = run(fresh_host), run(fresh_host)
    assert first.rc == 0, first.stderr
    assert "Polling thread turned off." in first.stdout
    assert "nothing changed" in second.stdout
    assert fresh_host.file("/tmp/calls").content_string == "chzcrypt -n\n"
    assert second.stdout.strip().endswith("poll_thread=0")


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_polling_thread_is_left_alone_without_interrupts_unless_asked_for(fresh_host):
    fresh_host.run_expect([0], FAKE.format(interrupts=0, poll=0))
    left = run(fresh_host)
    assert "zcrypt polls" in left.stdout
    assert fresh_host.file("/tmp/calls").content_string == ""
    asked = run(fresh_host, "AP_POLL_THREAD=on")
    assert "Polling thread turned on." in asked.stdout
    assert fresh_host.file("/tmp/calls").content_string == "chzcrypt -p\n"


@pytest.mark.snippet("crypto/adapters/lszcrypt-b-no-adapters.out", checker="output-regenerated")
def test_lszcrypt_b_without_adapters_says_the_driver_is_not_available(host):
    result = host.run("lszcrypt -b")
    assert result.rc != 0
    assert_shown_output("crypto/adapters/lszcrypt-b-no-adapters.out", result.stdout + result.stderr)
