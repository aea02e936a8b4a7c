"""check-fixed-versions.sh with the fixed-versions facts table as its only source of minimums
(zrunbook.crypto.fixed_versions.arguments). On Debian 13 the installed openCryptoki 3.23.0+dfsg-0.3+deb13u1
passes: CVE-2026-40253 and CVE-2026-23893 are fixed by its deb13u1 update, and CVE-2026-22791 does not apply to
3.23 (its CVE record lists 3.25.0 to 3.26.0). An older installed version (the real dpkg-query's answer rewritten to
the version before deb13u1, compared by the real dpkg --compare-versions) fails with a sentence; a row that says a
release has no fixed package fails; a release the table has no confirmed rows for is "cannot tell" (exit 5, the
verify steps' code for it), not a failure."""

import re

import pytest

from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import copy_to, output
from zrunbook import SNIPPETS, facts
from zrunbook.crypto.fixed_versions import TABLE, arguments
from zrunbook.verify import profile
from zrunbook.verify.fleet import CANNOT_TELL
from zrunbook.verify.steps import BY_ID, values

CHECK = "crypto/verify/check-fixed-versions.sh"
INSTALLED = "3.23.0+dfsg-0.3+deb13u1"  # Debian 13's openCryptoki on the check hosts
# dpkg-query as it answers with the package before the security update: the real one, version rewritten
OLD_DPKG_QUERY = """#!/bin/sh
/usr/bin/dpkg-query "$@" | sed 's/3\\.23\\.0+dfsg-0\\.3+deb13u1/3.23.0+dfsg-0.3/'
"""


def test_the_arguments_are_the_table_rows_that_name_a_release():
    rows = facts.table(TABLE)
    args = arguments()
    assert len(args) == 4 * sum(1 for r in rows if r["os-release"])
    debian = {args[i + 1]: args[i + 3] for i in range(0, len(args), 4) if args[i] == "debian 13"}
    assert debian == {"CVE-2026-40253": INSTALLED, "CVE-2026-23893": INSTALLED, "CVE-2026-22791": "not affected",
                      "CVE-2023-6258": "0.3"}
    assert all(r["fixed version"] == "not confirmed" for r in rows if not r["os-release"] and
               r["distribution"] != "upstream")


@pytest.mark.snippet(CHECK, checker="testinfra")
def test_debian_13_passes_fixed_for_two_cves_and_not_affected_by_the_third(host):
    r = run_snippet(host, CHECK, *arguments())
    assert r.rc == 0, output(r)
    assert f"CVE-2026-40253: opencryptoki {INSTALLED} is at or above the fixed version {INSTALLED}." in r.stdout
    assert f"CVE-2026-23893: opencryptoki {INSTALLED} is at or above the fixed version {INSTALLED}." in r.stdout
    assert (f"CVE-2026-22791: opencryptoki {INSTALLED} is not affected: debian 13's package predates the affected "
            "versions.") in r.stdout, output(r)
    assert re.search(r"^CVE-2023-6258: pkcs11-provider 1\.\S+ is at or above the fixed version 0\.3\.$", r.stdout,
                     re.M), output(r)


@pytest.mark.negative("crypto/verify/check-fixed-versions.sh",
                      expects="the check fails for a release that has no fixed package")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_a_release_with_no_fixed_package_fails(host):
    r = run_snippet(host, CHECK, "debian 13", "CVE-2026-22791", "opencryptoki", "none")
    assert r.rc == 1, output(r)
    assert f"CVE-2026-22791: opencryptoki {INSTALLED} is installed and debian 13 has no fixed package for it." \
        in r.stderr, output(r)


@pytest.mark.negative("crypto/verify/check-fixed-versions.sh",
                      expects="the check fails, in a sentence, for an openCryptoki older than the fixed version")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_an_opencryptoki_older_than_the_fixed_version_fails_with_a_sentence(fresh_host):
    fresh_host.run_expect([0], "mkdir -p /tmp/old")
    copy_to(fresh_host, OLD_DPKG_QUERY, "/tmp/old/dpkg-query")
    fresh_host.run_expect([0], "chmod 755 /tmp/old/dpkg-query")
    fixed_only = ["debian 13", "CVE-2026-23893", "opencryptoki", INSTALLED]
    r = fresh_host.run(f"PATH=/tmp/old:$PATH bash {snippet_path(CHECK)} " + " ".join(f"'{a}'" for a in fixed_only))
    assert r.rc == 1, output(r)
    assert (f"CVE-2026-23893: opencryptoki 3.23.0+dfsg-0.3 is older than the fixed version {INSTALLED}: "
            "update it.") in r.stderr, output(r)
    r = run_snippet(fresh_host, CHECK, *fixed_only)  # the real dpkg-query: the installed update passes
    assert r.rc == 0, output(r)
    assert "Every package checked is at or above its fixed version." in r.stdout


@pytest.mark.negative("crypto/verify/check-fixed-versions.sh",
                      expects="a release the table confirms no fixed versions for exits cannot tell, saying so")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_a_release_without_confirmed_rows_is_cannot_tell_not_a_failure(host):
    r = run_snippet(host, CHECK, "sles 16", "CVE-2026-40253", "openCryptoki", "3.27")
    assert r.rc == CANNOT_TELL, output(r)
    assert "Cannot tell: the table confirms no fixed versions for debian 13." in r.stderr, output(r)


@pytest.mark.snippet(CHECK, checker="testinfra")
def test_the_check_asks_for_quadruples(host):
    r = run_snippet(host, CHECK, "debian 13", "CVE-2026-23893", "opencryptoki")
    assert r.rc == 2, output(r)
    assert "Give quadruples: RELEASE CVE PACKAGE FIXED-VERSION" in r.stderr, output(r)


@pytest.mark.uses("verify/site-profile.toml")
def test_verify_passes_the_table_rows_to_the_check():
    step = BY_ID["crypto-fixed-versions"]
    assert step.snippet == CHECK
    env, args = values(step, profile.load(SNIPPETS / "verify/site-profile.toml"), None, None, {})
    assert env == {}
    assert args == arguments()
