"""check-key-in-token.sh reads key attributes that p11sak prints from openCryptoki 3.21 on. It gates on the
library's version (pkcsconf -i), not on '--long' in p11sak's help, which older releases also show."""

import pytest

from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.util import copy_to, output

CHECK = "crypto/verify/check-key-in-token.sh"
# pkcsconf as an older openCryptoki answers: the real one, with the library version rewritten
OLD_PKCSCONF = """#!/bin/sh
/usr/sbin/pkcsconf "$@" | sed 's/\\(Library Version:\\{0,1\\}[[:space:]]*\\)[0-9]*\\.[0-9]*/\\13.20/'
"""


def run_check(host):
    return host.run(f"env TOKEN_USER_PIN=00000000 SLOT=1 bash {snippet_path(CHECK)} localhost:443")


@pytest.mark.negative("crypto/verify/check-key-in-token.sh",
                      expects="the check stops: this is openCryptoki 3.20: its p11sak cannot list key attributes")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_the_key_check_refuses_an_opencryptoki_older_than_3_21_by_its_version(fresh_host):
    start_pkcsslotd(fresh_host)
    real = fresh_host.run("pkcsconf -i")
    assert real.rc == 0, output(real)
    assert "3.2" in real.stdout, real.stdout  # Debian 13: 3.23
    copy_to(fresh_host, OLD_PKCSCONF, "/usr/local/bin/pkcsconf")
    fresh_host.run_expect([0], "chmod 755 /usr/local/bin/pkcsconf")
    r = run_check(fresh_host)
    assert r.rc == 1, output(r)
    assert "this is openCryptoki 3.20: its p11sak cannot list key attributes" in r.stderr, output(r)
    fresh_host.run_expect([0], "rm /usr/local/bin/pkcsconf")
    r = run_check(fresh_host)  # 3.23 passes the gate and goes on to the token (no site here: it stops later)
    assert "cannot list key attributes" not in r.stderr, output(r)
