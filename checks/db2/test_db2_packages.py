"""The Db2 prerequisite snippets on the container hosts (packages preinstalled; containers are offline)."""

from __future__ import annotations

import pytest

from checks.hosts.steps import run_snippet

INSTALL = "db2/packages/install-prereqs-debian.sh"
VERIFY = "db2/packages/verify-prereqs.sh"
DLOPEN = "perl -MDynaLoader -e 'DynaLoader::dl_load_file($ARGV[0], 0) or die DynaLoader::dl_error()' "


def output(result) -> str:
    return f"rc={result.rc}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


@pytest.mark.snippet(VERIFY, checker="testinfra")
def test_verify_reports_libaio_missing_on_a_fresh_debian_13(fresh_host):
    result = run_snippet(fresh_host, VERIFY)
    assert result.rc == 1, output(result)
    assert "missing: libaio.so.1" in result.stderr


@pytest.mark.arch_dependent("the libraries are in the architecture's multiarch folder")
@pytest.mark.snippet(INSTALL, VERIFY, checker="testinfra")
def test_install_snippet_leaves_every_library_db2_loads_installed_and_loadable(fresh_host):
    result = run_snippet(fresh_host, INSTALL)
    assert result.rc == 0, output(result)
    for package in ("libaio1t64", "libstdc++6", "libpam0g"):
        assert fresh_host.package(package).is_installed, package
    for lib in ("libaio.so.1", "libstdc++.so.6", "libpam.so.0"):
        loaded = fresh_host.run(DLOPEN + lib)
        assert loaded.rc == 0, output(loaded)
    verify = run_snippet(fresh_host, VERIFY)
    assert verify.rc == 0, output(verify)
    assert verify.stdout.strip().endswith("Db2 prerequisites installed")


@pytest.mark.snippet(INSTALL, checker="testinfra")
def test_install_snippet_can_run_twice(fresh_host):
    for _ in range(2):
        result = run_snippet(fresh_host, INSTALL)
        assert result.rc == 0, output(result)
