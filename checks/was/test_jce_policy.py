"""The JCE policy check, run for real: the reader's run-jce-check.sh drives print-max-aes-key-length.py through
wsadmin.sh; in the container a stand-in wsadmin.sh hands the script to the real Jython (a JVM, as wsadmin is).
The negative case switches that JVM to the limited policy (crypto.policy=limited) and the check must say so.
"""

import pytest

from checks.hosts.plugin import run_snippet
from checks.was.util import copy_to, output

RUNNER = "was/jce/run-jce-check.sh"
SCRIPT = "was/jce/print-max-aes-key-length.py"
WAS_HOME = "/opt/IBM/WebSphere/AppServer"
STAND_IN = """#!/bin/sh
# Stand-in for wsadmin.sh in the checks: -lang jython -conntype NONE -f FILE runs FILE under the real Jython.
while [ $# -gt 0 ]; do case "$1" in -f) file=$2; shift 2;; *) shift;; esac; done
exec jython "$file"
"""


def install_stand_in(host):
    copy_to(host, STAND_IN, f"{WAS_HOME}/bin/wsadmin.sh")
    host.run_test(f"chmod +x {WAS_HOME}/bin/wsadmin.sh")


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(RUNNER, SCRIPT, checker="testinfra")
def test_current_java_reports_the_unlimited_policy(fresh_host):
    install_stand_in(fresh_host)
    result = run_snippet(fresh_host, RUNNER)
    assert result.rc == 0, output(result)
    assert result.stdout.strip() == "unlimited JCE policy: AES keys up to 2147483647 bits"


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(RUNNER, SCRIPT, checker="testinfra")
def test_check_names_the_limited_policy(fresh_host):
    install_stand_in(fresh_host)
    copy_to(fresh_host, "crypto.policy=limited\n", "/tmp/limited.security")
    result = fresh_host.run(
        "JAVA_TOOL_OPTIONS=-Djava.security.properties=/tmp/limited.security bash /snippets/" + RUNNER)
    assert result.rc == 0, output(result)
    assert result.stdout.strip().startswith("LIMITED JCE policy: AES keys up to 128 bits"), output(result)


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(RUNNER, checker="testinfra")
def test_check_explains_a_missing_websphere(fresh_host):
    result = run_snippet(fresh_host, RUNNER)
    assert result.rc == 1, output(result)
    assert "set WAS_HOME" in result.stderr, output(result)
