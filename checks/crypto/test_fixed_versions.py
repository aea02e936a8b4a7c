"""check-fixed-versions.sh against the fixed-versions facts table (the one source of the minimums): Debian 13's
installed openCryptoki passes for the CVEs its deb13u1 update fixes and fails for CVE-2026-22791, for which the
table knows no fixed Debian package; an older installed version (the real dpkg-query's answer rewritten to the
version before deb13u1) fails with a sentence, compared by the real dpkg --compare-versions."""

import csv
from pathlib import Path

import pytest

from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import copy_to, output

CHECK = "crypto/verify/check-fixed-versions.sh"
TABLE = Path(__file__).resolve().parents[2] / "facts/crypto/fixed-versions.csv"
DEBIAN = "Debian 13 (trixie)"
# dpkg-query as it answers with the package before the security update: the real one, version rewritten
OLD_DPKG_QUERY = """#!/bin/sh
/usr/bin/dpkg-query "$@" | sed 's/3\\.23\\.0+dfsg-0\\.3+deb13u1/3.23.0+dfsg-0.3/'
"""


def rows(distribution: str) -> list[dict[str, str]]:
    with TABLE.open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["distribution"] == distribution]


def triples(distribution: str, fixed: bool) -> list[str]:
    args = []
    for r in rows(distribution):
        if (r["fixed version"] != "none") == fixed:
            args += [r["cve"], r["component"], r["fixed version"]]
    return args


def test_the_table_gives_debian_13_a_fixed_version_or_none_for_each_opencryptoki_cve():
    upstream = {r["cve"] for r in rows("upstream")}
    debian = {r["cve"]: r["fixed version"] for r in rows(DEBIAN)}
    assert set(debian) == upstream == {"CVE-2026-40253", "CVE-2026-23893", "CVE-2026-22791"}
    assert debian["CVE-2026-22791"] == "none"


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_debian_13_opencryptoki_is_fixed_for_the_cves_its_update_names(host):
    r = run_snippet(host, CHECK, *triples(DEBIAN, fixed=True))
    assert r.rc == 0, output(r)
    assert "CVE-2026-23893: opencryptoki 3.23.0+dfsg-0.3+deb13u1 is at or above" in r.stdout, output(r)


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_debian_13_opencryptoki_fails_for_the_cve_without_a_fixed_package(host):
    r = run_snippet(host, CHECK, *triples(DEBIAN, fixed=False))
    assert r.rc == 1, output(r)
    assert "CVE-2026-22791: opencryptoki 3.23.0+dfsg-0.3+deb13u1 is installed and no fixed package is known" \
        in r.stderr, output(r)


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_an_opencryptoki_older_than_the_fixed_version_fails_with_a_sentence(fresh_host):
    fresh_host.run_expect([0], "mkdir -p /tmp/old")
    copy_to(fresh_host, OLD_DPKG_QUERY, "/tmp/old/dpkg-query")
    fresh_host.run_expect([0], "chmod 755 /tmp/old/dpkg-query")
    r = fresh_host.run(f"PATH=/tmp/old:$PATH bash {snippet_path(CHECK)} " + " ".join(triples(DEBIAN, fixed=True)))
    assert r.rc == 1, output(r)
    assert ("CVE-2026-23893: opencryptoki 3.23.0+dfsg-0.3 is older than the fixed version "
            "3.23.0+dfsg-0.3+deb13u1: update it.") in r.stderr, output(r)


@pytest.mark.snippet(CHECK, checker="testinfra")
def test_the_check_asks_for_triples(host):
    r = run_snippet(host, CHECK, "CVE-2026-23893", "opencryptoki")
    assert r.rc == 2, output(r)
    assert "Give triples: CVE PACKAGE FIXED-VERSION" in r.stderr, output(r)
