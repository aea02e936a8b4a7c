"""The checks a reader runs in WebSphere's own Java, run for real: run-in-websphere-java.sh drives a Jython
script through wsadmin.sh; in the container a stand-in wsadmin.sh hands the script to the real Jython (a JVM,
as wsadmin is). The JCE policy check must tell the limited policy (crypto.policy=limited) from the unlimited
one; the provider list must match what the JVM itself reports (java -XshowSettings:security:providers).
"""

import pytest

from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import copy_to, output

RUNNER = "was/java/run-in-websphere-java.sh"
SCRIPT = "was/java/print-max-aes-key-length.py"
PROVIDERS = "was/java/print-providers.py"
WAS_HOME = "/opt/IBM/WebSphere/AppServer"
STAND_IN = """#!/bin/sh
# Stand-in for wsadmin.sh in the checks: -lang jython -conntype NONE -f FILE runs FILE under the real Jython.
while [ $# -gt 0 ]; do case "$1" in -f) file=$2; shift 2;; *) shift;; esac; done
exec jython "$file"
"""


def install_stand_in(host):
    copy_to(host, STAND_IN, f"{WAS_HOME}/bin/wsadmin.sh")
    host.run_expect([0], f"chmod +x {WAS_HOME}/bin/wsadmin.sh")


@pytest.mark.snippet(RUNNER, SCRIPT, checker="testinfra")
def test_current_java_reports_the_unlimited_policy(fresh_host):
    install_stand_in(fresh_host)
    result = run_snippet(fresh_host, RUNNER, snippet_path(SCRIPT))
    assert result.rc == 0, output(result)
    assert result.stdout.strip() == "unlimited JCE policy: AES keys up to 2147483647 bits"


@pytest.mark.snippet(RUNNER, SCRIPT, checker="testinfra")
def test_check_names_the_limited_policy(fresh_host):
    install_stand_in(fresh_host)
    copy_to(fresh_host, "crypto.policy=limited\n", "/tmp/limited.security")
    result = fresh_host.run(
        "JAVA_TOOL_OPTIONS=-Djava.security.properties=/tmp/limited.security "
        f"bash {snippet_path(RUNNER)} {snippet_path(SCRIPT)}")
    assert result.rc == 0, output(result)
    assert result.stdout.strip().startswith("LIMITED JCE policy: AES keys up to 128 bits"), output(result)


@pytest.mark.snippet(RUNNER, checker="testinfra")
def test_check_explains_a_missing_websphere(fresh_host):
    result = run_snippet(fresh_host, RUNNER, snippet_path(SCRIPT))
    assert result.rc == 1, output(result)
    assert "set WAS_HOME" in result.stderr, output(result)


def jvm_provider_names(host, options=""):
    result = host.run(f"{options} java -XshowSettings:security:providers -version")
    return [line.split(":", 1)[1].strip() for line in result.stderr.splitlines()
            if line.strip().startswith("Provider name:")]


@pytest.mark.snippet(RUNNER, PROVIDERS, checker="testinfra")
def test_provider_list_matches_the_jvms_own_order_default_and_reordered(fresh_host):
    install_stand_in(fresh_host)
    copy_to(fresh_host, "security.provider.1=SunJCE\nsecurity.provider.2=SUN\nsecurity.provider.3=SunRsaSign\n",
            "/tmp/reordered.security")
    for options in ("", "JAVA_TOOL_OPTIONS=-Djava.security.properties=/tmp/reordered.security"):
        result = fresh_host.run(f"{options} bash {snippet_path(RUNNER)} {snippet_path(PROVIDERS)}")
        assert result.rc == 0, output(result)
        printed = [line.split()[1] for line in result.stdout.splitlines()]
        assert printed == jvm_provider_names(fresh_host, options), output(result)
        assert result.stdout.splitlines()[0].split()[0] == "1"
    assert printed[:2] == ["SunJCE", "SUN"], printed
