"""Every erratum with a checker: its bad form goes through that checker here and is rejected.

The data is facts/errata/errata.csv, also rendered as the errata reference page; its checker column names
a checker of zrunbook/checkers.toml. Static checkers run right here, through the registry's validator;
host checkers run on the amd64 container host: udevadm verify, httpd -t with the IHS lint, SunPKCS11
(the WAS chapter's Pkcs11Check.java, one JVM for every .cfg row) and testinfra (the study's shell lines run,
the resulting state asserted; a fresh container where they change it). Rows whose checker is ``review``
correct prose no tool can run: they carry no bad form, and the page lists them as documented only.
The chapter's own negative test, named in the row, must exist and run the same bad form.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from zrunbook import facts as facts_tables
from zrunbook import registry

ROOT = Path(__file__).resolve().parents[2]
ROWS = facts_tables.table("errata/errata")
REVIEW = "review"
CHECKED = [r for r in ROWS if r["checker"] != REVIEW]


def ids(rows):
    return [r["id"] for r in rows]


def rejected_statically(row) -> list[str]:
    """The row's bad form through its checker's validator, looked up in zrunbook/checkers.toml."""
    return registry.problems(row["checker"], ROOT / row["bad form"])


# --- host checkers -----------------------------------------------------------------------------------------

def _copy(host, row) -> str:
    from checks.hosts.util import copy_to

    target = f"/tmp/errata/{Path(row['bad form']).name}"
    copy_to(host, (ROOT / row["bad form"]).read_text(encoding="utf-8"), target)
    return target


_SUNPKCS11: dict[str, dict[str, str]] = {}


def sunpkcs11_errors(host) -> dict[str, str]:
    """Every sunpkcs11 row's file loaded by the WAS chapter's Pkcs11Check.java in ONE JVM: file -> output.

    The parser rejects these files before any token is opened, so no slot daemon or token is needed."""
    if host.zr_name not in _SUNPKCS11:
        from checks.hosts.jsse import PKCS11_CHECK
        from checks.hosts.util import copy_to, output

        paths = [_copy(host, r) for r in CHECKED if r["checker"] == "sunpkcs11"]
        java = (ROOT / PKCS11_CHECK).read_text(encoding="utf-8")
        copy_to(host, java, "/tmp/errata/Pkcs11Check.java")
        result = host.run(f"cd /tmp/errata && TOKEN_USER_PIN=unused java Pkcs11Check.java {' '.join(paths)}")
        assert result.rc == 0, output(result)
        sections = re.split(r"^== ", result.stdout, flags=re.M)[1:]
        _SUNPKCS11[host.zr_name] = {s.split("\n", 1)[0]: s for s in sections}
    return _SUNPKCS11[host.zr_name]


def usermod_keeps_no_other_group(host, row) -> bool:
    host.run_expect([0], "useradd -m -G users,audio wasadmin")
    host.run_expect([0], "bash " + shlex.quote(_copy(host, row)))
    groups = set(host.check_output("id -nG wasadmin").split())
    assert "pkcs11" in groups, groups
    return not groups >= {"users", "audio"}


def old_opencryptoki_names_are_gone(host, row) -> bool:
    result = host.run("bash " + shlex.quote(_copy(host, row)))
    assert host.exists("pkcsslotd"), "the corrected name is missing too: the check would prove nothing"
    assert host.run("dpkg -S /usr/lib/systemd/system/pkcsslotd.service").rc == 0
    return result.rc == 127 and "pkcs11_startup: command not found" in result.stderr


# testinfra rows: what runs the bad form, and whether it changes the container (then a fresh one).
TESTINFRA = {"usermod-replaces-groups.sh": (usermod_keeps_no_other_group, True),
             "start-opencryptoki-2013-names.sh": (old_opencryptoki_names_are_gone, False)}

STATIC = [r for r in CHECKED if r["checker"] in registry.static()]
ON_HOST = [r for r in CHECKED if r["checker"] in {"udevadm-verify", "httpd-t", "sunpkcs11"}
           or (r["checker"] == "testinfra" and not TESTINFRA[Path(r["bad form"]).name][1])]
ON_FRESH_HOST = [r for r in CHECKED if r["checker"] == "testinfra" and TESTINFRA[Path(r["bad form"]).name][1]]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_erratum_names_a_page_that_exists(row):
    assert (ROOT / "docs" / f"{row['corrected on']}.md").is_file(), row["corrected on"]


@pytest.mark.negative(invariant="every erratum is checked with a bad form or marked for review",
                      expects="a checked erratum without a bad form or a negative test fails")
@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_erratum_is_either_checked_with_a_bad_form_or_marked_for_review(row):
    if row["checker"] == REVIEW:
        assert not row["bad form"], row
        assert not row["negative test"], row
    else:
        assert row["bad form"], f"{row['id']}: a checker needs a bad form"
        assert row["negative test"], f"{row['id']}: a checker needs a negative test"


@pytest.mark.parametrize("row", CHECKED, ids=ids(CHECKED))
def test_erratum_names_a_checker_of_the_registry(row):
    assert row["checker"] in registry.checkers(), f"{row['checker']!r} is not in zrunbook/checkers.toml"


@pytest.mark.parametrize("row", [pytest.param(r, marks=pytest.mark.uses(*registry.reads(r["checker"])))
                                 for r in STATIC], ids=ids(STATIC))
def test_static_checker_rejects_the_studys_form(row):
    assert rejected_statically(row), f"{row['checker']} accepted {row['bad form']}"


# what a host checker reads besides the bad form: httpd -t loads the page's PKCS #11 driver file
# (checks.standins.ihs.ihs_lint)
HOST_READS = {"httpd-t": ["ihs/httpd/pkcs11-driver-*.conf"]}


@pytest.mark.parametrize("row", [pytest.param(r, marks=pytest.mark.uses(*HOST_READS.get(r["checker"], [])))
                                 for r in ON_HOST], ids=ids(ON_HOST))
def test_host_checker_rejects_the_studys_form(host, row):
    if row["checker"] == "udevadm-verify":
        assert host.run(f"udevadm verify {_copy(host, row)}").rc != 0
    elif row["checker"] == "httpd-t":
        from checks.standins.ihs.ihs_lint import httpd_t, ihs_root

        assert httpd_t(host, ihs_root(host, (ROOT / row["bad form"]).read_text(encoding="utf-8"))).rc != 0
    elif row["checker"] == "sunpkcs11":
        from checks.hosts.jsse import SUNPKCS11_REJECTS

        got = sunpkcs11_errors(host)[f"/tmp/errata/{Path(row['bad form']).name}"]
        assert SUNPKCS11_REJECTS[Path(row["bad form"]).name] in got, got
        assert "provider:" not in got, got
    else:
        check, _fresh = TESTINFRA[Path(row["bad form"]).name]
        assert check(host, row), f"testinfra: {row['bad form']} did what the corrected form does"


@pytest.mark.parametrize("row", ON_FRESH_HOST, ids=ids(ON_FRESH_HOST))
def test_state_changing_checker_rejects_the_studys_form(fresh_host, row):
    check, _fresh = TESTINFRA[Path(row["bad form"]).name]
    assert check(fresh_host, row), f"testinfra: {row['bad form']} did what the corrected form does"


# --- the positive twin of a rule only an erratum shows -------------------------------------------------------

def test_db2_buffer_pool_rule_accepts_size_automatic_after_bp_resizeable_yes():
    from zrunbook.formats import clp
    bad = ROOT / "checks/errata/bad/autoconfigure-resizeable-then-fixed-buffer-pool-2013.sh"
    text = bad.read_text(encoding="utf-8")
    assert clp.validate(text.replace("size 1048576", "size automatic"), "9.7") == []
    assert clp.validate(text.replace("bp_resizeable yes", "bp_resizeable no"), "9.7") == []


# --- the chapter's own negative test ----------------------------------------------------------------------

@functools.cache
def collected(test_file: str) -> tuple[str, ...]:
    """The test ids test_file collects on every host, whatever hosts this run selected (ZR_HOSTS) and
    whichever the s390x rule would leave out: the question is whether the negative test exists."""
    env = dict(os.environ, ZR_HOSTS="", ZR_EVERY_HOST="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
                           "-p", "no:cacheprovider", test_file], cwd=ROOT, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return tuple(line for line in proc.stdout.splitlines() if "::" in line)


@pytest.mark.negative(invariant="an erratum's negative test runs its bad form",
                      expects="a named test that collects nothing or never runs the bad form fails")
@pytest.mark.parametrize("row", CHECKED, ids=ids(CHECKED))
def test_erratum_has_a_negative_test_that_runs_its_bad_form(row):
    assert (ROOT / row["bad form"]).is_file(), row["bad form"]
    test_file, _, test_name = row["negative test"].partition("::")
    if test_file == "checks/errata/test_errata.py":  # run by this module: the row is in the named test's list
        lists = {"test_static_checker_rejects_the_studys_form": STATIC,
                 "test_host_checker_rejects_the_studys_form": ON_HOST,
                 "test_state_changing_checker_rejects_the_studys_form": ON_FRESH_HOST}
        assert row in lists[test_name], f"{row['id']} is not run by {test_name}"
        return
    tests = [t for t in collected(test_file) if not test_name or f"::{test_name}" in t]
    assert tests, f"{row['negative test']} collects no test"
    name = Path(row["bad form"]).name
    source = (ROOT / test_file).read_text(encoding="utf-8")
    assert any(name in t for t in tests) or name in source, f"{row['negative test']} does not run {row['bad form']}"
