"""The crypto-package page's snippets, run on the container hosts (the harness's first real suite).

amd64 stands in for any non-Z machine (openCryptoki's soft token); s390x, under qemu-user, has the
ICA token and libica's tools. No crypto adapter exists in a container, so nothing here claims that
the hardware is used: only that the packages, the daemon and the token are there.

The last three tests check the container host the snippets run on (daemon, token, libica), not a snippet:
they run neither install-packages-debian.sh nor verify-packages.sh, so they carry no snippet marker.
"""

import pytest

from checks.hosts.steps import arch, run_snippet, start_pkcsslotd
from checks.hosts.token import MODEL
from checks.hosts.util import output

INSTALL = "crypto/packages/install-packages-debian.sh"
VERIFY = "crypto/packages/verify-packages.sh"



@pytest.mark.arch_dependent("the package set differs: libica and the ICA token on s390x")
@pytest.mark.snippet(INSTALL, checker="testinfra")
def test_install_snippet_succeeds_offline_and_leaves_the_packages_installed(fresh_host):
    result = run_snippet(fresh_host, INSTALL)
    assert result.rc == 0, output(result)
    wanted = ["opencryptoki", "openssl", "procps"]  # openssl: `openssl version` before 05-verify; procps: ps
    if fresh_host.zr_name == "debian13-s390x":
        wanted += ["libica-utils", "s390-tools"]
    for package in wanted:
        assert fresh_host.package(package).is_installed, package


@pytest.mark.snippet(VERIFY, checker="testinfra")
def test_verify_snippet_reports_the_crypto_stack_installed(host):
    result = run_snippet(host, VERIFY)
    assert result.rc == 0, output(result)
    assert "crypto stack installed" in result.stdout


@pytest.mark.negative("crypto/packages/verify-packages.sh",
                      expects="with pkcsconf removed the check fails: missing: command pkcsconf")
@pytest.mark.snippet(VERIFY, checker="testinfra")
def test_verify_snippet_names_a_missing_command_and_fails(fresh_host):
    fresh_host.run_expect([0], "rm /usr/sbin/pkcsconf")
    result = run_snippet(fresh_host, VERIFY)
    assert result.rc == 1, output(result)
    assert "missing: command pkcsconf" in result.stderr


def test_pkcsslotd_runs_after_start(fresh_host):
    assert fresh_host.run("pgrep -x pkcsslotd").rc != 0, "pkcsslotd must not run before it is started"
    start_pkcsslotd(fresh_host)
    assert fresh_host.run("pgrep -x pkcsslotd").rc == 0
    assert fresh_host.file("/run/opencryptoki/pkcsslotd.socket").is_socket


@pytest.mark.arch_dependent("the ICA token on s390x, the soft token elsewhere")
def test_pkcsconf_lists_the_token_of_the_architecture(fresh_host):
    start_pkcsslotd(fresh_host)
    result = fresh_host.run("pkcsconf -t")
    assert result.rc == 0, output(result)
    models = [line.split(":", 1)[1].strip() for line in result.stdout.splitlines() if "Model:" in line]
    assert MODEL[arch(fresh_host)] in models, output(result)


@pytest.mark.only_hosts("debian13-s390x")
def test_icainfo_lists_libica_functions_on_s390x(host):
    result = host.run("icainfo")
    assert result.rc == 0, output(result)
    assert "SHA-512" in result.stdout, output(result)
