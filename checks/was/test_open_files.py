"""Open files for the WebSphere user: limits.d at login, a unit drop-in under systemd, the 2013 profile line.

A container's processes start with a generous open-files limit, so every test first writes a distribution-like
baseline into /etc/security/limits.conf (soft 1024) and proves that a login shell gets it; only then does a
snippet have something to raise.
"""

from pathlib import Path

import pytest

from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import copy_to, output

HERE = Path(__file__).resolve().parent

LIMITS = "was/limits/90-websphere-nofile.conf"
DROPIN = "was/limits/websphere-nofile-dropin.conf"
CHECK = "was/limits/check-nofile-limit.sh"
PROFILE_2013 = "was/limits/append-ulimit-to-profile-2013.sh"
USER = "wasadmin"

# A stand-in for the unit that starts WebSphere (its name differs per installation).
UNIT = """[Unit]
Description=WebSphere Application Server (stand-in for the checks)
[Service]
Type=forking
ExecStart=/opt/IBM/WebSphere/AppServer/bin/startServer.sh server1
[Install]
WantedBy=multi-user.target
"""


def login_limits(host, user=USER):
    result = host.run(f"su - {user} -s /bin/bash -c 'echo $(ulimit -Sn) $(ulimit -Hn)'")
    assert result.rc == 0, output(result)
    soft, hard = result.stdout.split()[-2:]
    return int(soft), int(hard)


def with_baseline(host, hard=4096):
    host.run_expect([0], f"useradd -m {USER}")
    host.run_expect([0], f"printf '*  soft  nofile  1024\\n*  hard  nofile  {hard}\\n' >> /etc/security/limits.conf")
    assert login_limits(host) == (1024, hard), "the baseline limit did not apply to a login shell"


def unit_limits(host, dropin_source):
    """Install the stand-in unit and the drop-in, verify them, and return systemd's effective (soft, hard)."""
    host.run_expect([0], "mkdir -p /etc/systemd/system/was.service.d /opt/IBM/WebSphere/AppServer/bin")
    host.run_expect([0], "printf '#!/bin/sh\\nexit 0\\n' > /opt/IBM/WebSphere/AppServer/bin/startServer.sh"
                  " && chmod +x /opt/IBM/WebSphere/AppServer/bin/startServer.sh")
    copy_to(host, UNIT, "/etc/systemd/system/was.service")
    host.run_expect([0], f"cp {dropin_source} /etc/systemd/system/was.service.d/nofile.conf")
    verify = host.run("systemd-analyze verify /etc/systemd/system/was.service")
    # systemd's test mode loads every unit the way PID 1 would and dumps them; it refuses to run as root.
    dump = host.run("runuser -u nobody -- /usr/lib/systemd/systemd --test --system --unit=was.service --no-pager")
    assert dump.rc == 0, output(dump)
    block = dump.stdout.split("\u2192 Unit was.service:", 1)[1].split("\u2192 Unit ", 1)[0]
    values = dict(line.strip().split(": ", 1) for line in block.splitlines() if line.strip().startswith("LimitNOFILE"))
    return verify, int(values["LimitNOFILESoft"]), int(values["LimitNOFILE"])


@pytest.mark.snippet(LIMITS, checker="sysctl-applied")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_limits_file_gives_the_websphere_user_8192_open_files_at_login(fresh_host):
    with_baseline(fresh_host)
    before = run_snippet(fresh_host, CHECK, USER)
    assert before.rc == 1, output(before)
    assert "below 8192" in before.stderr, output(before)
    fresh_host.run_expect([0], f"install -m 644 {snippet_path(LIMITS)} /etc/security/limits.d/90-websphere-nofile.conf")
    assert login_limits(fresh_host) == (8192, 16384)
    after = run_snippet(fresh_host, CHECK, USER)
    assert after.rc == 0, output(after)
    assert "soft 8192, hard 16384" in after.stdout


@pytest.mark.snippet(CHECK, checker="testinfra")
def test_check_names_a_missing_user(fresh_host):
    result = run_snippet(fresh_host, CHECK, "nosuchuser")
    assert result.rc == 1, output(result)
    assert "does not exist" in result.stderr, output(result)


@pytest.mark.snippet(LIMITS, checker="sysctl-applied")
def test_limits_line_without_a_type_leaves_the_default(fresh_host):
    with_baseline(fresh_host)
    copy_to(fresh_host, (HERE / "bad" / "limits-without-type.conf").read_text(),
            "/etc/security/limits.d/90-websphere-nofile.conf")
    assert login_limits(fresh_host) == (1024, 4096)


@pytest.mark.snippet(DROPIN, checker="sysctl-applied")
def test_dropin_gives_the_websphere_unit_8192_open_files(fresh_host):
    verify, soft, hard = unit_limits(fresh_host, snippet_path(DROPIN))
    assert verify.rc == 0, output(verify)
    assert "nofile.conf" not in verify.stderr, output(verify)
    assert (soft, hard) == (8192, 16384)


@pytest.mark.snippet(DROPIN, checker="sysctl-applied")
def test_dropin_in_the_unit_section_is_ignored(fresh_host):
    copy_to(fresh_host, (HERE / "bad" / "nofile-dropin-in-unit-section.conf").read_text(), "/tmp/bad.conf")
    verify, soft, hard = unit_limits(fresh_host, "/tmp/bad.conf")
    assert "Unknown key 'LimitNOFILE' in section [Unit]" in verify.stderr, output(verify)
    assert soft < 8192


@pytest.mark.snippet(PROFILE_2013, checker="testinfra")
def test_2013_profile_line_raises_the_limit_when_the_hard_limit_allows(fresh_host):
    with_baseline(fresh_host, hard=16384)
    first = run_snippet(fresh_host, PROFILE_2013, "/etc/profile.d/websphere-ulimit.sh")
    second = run_snippet(fresh_host, PROFILE_2013, "/etc/profile.d/websphere-ulimit.sh")
    assert first.rc == 0, output(first)
    assert second.rc == 0, output(second)
    assert "nothing changed" in second.stdout, output(second)
    assert fresh_host.file("/etc/profile.d/websphere-ulimit.sh").content_string.count("ulimit") == 1
    assert login_limits(fresh_host)[0] == 8192


@pytest.mark.negative("was/limits/append-ulimit-to-profile-2013.sh",
                      expects="under a lower hard limit the 2013 profile line fails: Operation not permitted, 1024 "
                              "stays")
@pytest.mark.snippet(PROFILE_2013, checker="testinfra")
def test_2013_profile_line_fails_under_a_lower_hard_limit(fresh_host):
    with_baseline(fresh_host, hard=4096)
    assert run_snippet(fresh_host, PROFILE_2013, "/etc/profile.d/websphere-ulimit.sh").rc == 0
    result = fresh_host.run(f"su - {USER} -s /bin/bash -c 'ulimit -n'")
    assert "Operation not permitted" in result.stderr, output(result)
    assert result.stdout.split()[-1] == "1024"
