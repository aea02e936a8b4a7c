"""The step that gives httpd its OPENSSL_CONF (snippets/ihs/apache/set-httpd-openssl-conf.sh), run again and again.

The token page runs it in step 4 with the ordinary file, its FIPS section runs it with the FIPS file, and a reader
who leaves FIPS mode runs it with the ordinary file again. Debian's /etc/apache2/envvars is a shell script, so the
last ``export OPENSSL_CONF=`` line wins. The check reads envvars as httpd's start does (sourced by a shell) and
counts the lines: after every run exactly one, naming the file asked for, and a second run of the same says so.
Negative (source review 2026-12 L-14): the step as it was appended the FIPS line beside the first, and switching
back found the first line, said "sets OPENSSL_CONF already" and left the FIPS file in force.
"""

from pathlib import Path

import pytest

from checks.hosts.apache import put
from checks.hosts.steps import snippet_path

STEP = "ihs/apache/set-httpd-openssl-conf.sh"
BAD = Path(__file__).parent / "bad"
PLAIN, FIPS = "/etc/ssl/openssl-pkcs11.conf", "/etc/ssl/openssl-pkcs11-fips.conf"


def run_step(host, step: str, conf: str = ""):
    r = host.run(f"{'OPENSSL_PKCS11_CONF=' + conf if conf else ''} bash {step}")
    assert r.rc == 0, r.stdout + r.stderr
    return r.stdout


def in_force(host) -> tuple[str, int]:
    """OPENSSL_CONF as httpd's start sees it (envvars sourced), and how many lines set it."""
    value = host.check_output("sh -c '. /etc/apache2/envvars; echo \"$OPENSSL_CONF\"'")
    lines = int(host.check_output("grep -c '^[[:space:]]*export OPENSSL_CONF=' /etc/apache2/envvars || true"))
    return value, lines


def two_files(host) -> None:
    host.run_expect([0], f"touch {PLAIN} {FIPS}")  # the step needs only that the file exists


@pytest.mark.snippet(STEP, checker="testinfra")
def test_the_step_is_idempotent_and_switches_to_fips_and_back(fresh_host):
    two_files(fresh_host)
    step = snippet_path(STEP)
    assert "earlier OPENSSL_CONF lines removed: 0" in run_step(fresh_host, step)
    assert in_force(fresh_host) == (PLAIN, 1)
    assert "sets OPENSSL_CONF=/etc/ssl/openssl-pkcs11.conf already" in run_step(fresh_host, step)
    assert in_force(fresh_host) == (PLAIN, 1)
    assert "earlier OPENSSL_CONF lines removed: 1" in run_step(fresh_host, step, FIPS)
    assert in_force(fresh_host) == (FIPS, 1)
    assert "already" in run_step(fresh_host, step, FIPS)
    assert in_force(fresh_host) == (FIPS, 1)
    back = run_step(fresh_host, step)  # leaving FIPS mode
    assert "already" not in back, back
    assert in_force(fresh_host) == (PLAIN, 1)


@pytest.mark.negative(
    "ihs/apache/set-httpd-openssl-conf.sh",
    expects="the old step appends a second line and, switching back, says 'sets OPENSSL_CONF "
            "already' while the FIPS file stays in force")
@pytest.mark.snippet(STEP, checker="testinfra")
def test_the_old_step_keeps_the_fips_line_when_asked_to_switch_back(fresh_host):
    two_files(fresh_host)
    put(fresh_host, "/tmp/old-step.sh", (BAD / "set-httpd-openssl-conf-appends.sh").read_text())
    run_step(fresh_host, "/tmp/old-step.sh")
    run_step(fresh_host, "/tmp/old-step.sh", FIPS)
    assert in_force(fresh_host) == (FIPS, 2)  # two lines
    back = run_step(fresh_host, "/tmp/old-step.sh")
    assert "sets OPENSSL_CONF already" in back
    assert in_force(fresh_host) == (FIPS, 2)  # a silent no-op: the FIPS file still wins
