"""Every erratum's bad form goes through its checker here and is rejected; its page and test exist.

The data is checks/errata/errata.csv, also rendered as the errata reference page. Static checkers run
right here; host checkers (udevadm verify, httpd -t) run on the amd64 host; the JVM-based and
state-changing ones (sunpkcs11, testinfra) are run by the negative test the row names, and this test
proves that test is collected with that bad form.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from checks.static.shellcheck import shellcheck

ROOT = Path(__file__).resolve().parents[2]
with open(ROOT / "checks/errata/errata.csv", encoding="utf-8", newline="") as _fh:
    ROWS = list(csv.DictReader(_fh))
CHECKED = [r for r in ROWS if r["checker"]]


def ids(rows):
    return [r["id"] for r in rows]


def rejected_statically(row) -> list[str]:
    path = ROOT / row["bad form"]
    text = path.read_text(encoding="utf-8")
    checker = row["checker"]
    if checker == "shellcheck":
        result = shellcheck(path)
        return [result.stdout] if result.returncode else []
    if checker == "db2-clp" and row["bad form"].startswith("checks/webseal/"):
        from checks.webseal import ldap_db

        return ldap_db.validate(text, "current")
    if checker == "db2-clp":
        from checks.db2 import clp

        return clp.validate(text, "9.7")
    if checker == "java-security" and row["bad form"].startswith("checks/ctg/"):
        from checks.ctg import jvm

        return jvm.java_security_problems(text)
    if checker == "java-security":
        from checks.was import java_security

        return java_security.problems(text)
    if checker == "format-validator (webseald stanzas)":
        from checks.webseal import stanza

        return stanza.validate(text)
    if checker == "format-validator (pdadmin)":
        from checks.webseal import pdadmin

        return pdadmin.validate(text)
    if checker == "format-validator (ctg.ini)":
        from checks.ctg import ctg_ini

        return ctg_ini.validate(text)
    if checker == "data-validator":
        from checks.results import study_data

        return study_data.validate(path)
    if checker == "recorded-on-ibm-z":
        from checks.crypto import recorded

        return recorded.lszcrypt_problems(text)
    if checker == "format-validator":
        from checks.ihs import gskit

        found = gskit.validate(text) if path.suffix == ".sh" else []
        if not found:  # a consistency mistake: the bad file in place of its good twin
            snippets = ROOT / "snippets/ihs"
            scripts = {p.name: p.read_text(encoding="utf-8") for p in (snippets / "gskit").glob("*-2013.sh")}
            scripts["stash-token-pin.sh"] = (snippets / "gskit/stash-token-pin.sh").read_text(encoding="utf-8")
            conf = (snippets / "httpd/httpd-ssl-2013.conf").read_text(encoding="utf-8")
            if path.suffix == ".sh":
                scripts.pop("create-token-certificate-2013.sh", None)
                scripts[path.name] = text
            else:
                conf = text
            found = gskit.consistency(scripts, conf)
        return found
    raise AssertionError(f"no static dispatch for checker {checker!r}")


STATIC = [r for r in CHECKED if r["checker"] in
          {"shellcheck", "db2-clp", "java-security", "recorded-on-ibm-z", "format-validator",
           "format-validator (webseald stanzas)", "format-validator (pdadmin)", "format-validator (ctg.ini)",
           "data-validator"}]
ON_HOST = [r for r in CHECKED if r["checker"] in {"udevadm-verify", "httpd-t"}]


@pytest.mark.parametrize("row", ROWS, ids=ids(ROWS))
def test_erratum_names_a_page_that_exists(row):
    assert (ROOT / "docs" / f"{row['corrected on']}.md").is_file(), row["corrected on"]


@pytest.mark.parametrize("row", STATIC, ids=ids(STATIC))
def test_static_checker_rejects_the_studys_form(row):
    assert rejected_statically(row), f"{row['checker']} accepted {row['bad form']}"


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.parametrize("row", ON_HOST, ids=ids(ON_HOST))
def test_host_checker_rejects_the_studys_form(host, row):
    text = (ROOT / row["bad form"]).read_text(encoding="utf-8")
    if row["checker"] == "udevadm-verify":
        from checks.was.util import copy_to

        name = Path(row["bad form"]).name
        copy_to(host, text, f"/tmp/errata/{name}")
        assert host.run(f"udevadm verify /tmp/errata/{name}").rc != 0
    else:
        from checks.ihs.ihs_lint import httpd_t, ihs_root

        assert httpd_t(host, ihs_root(host, text)).rc != 0


@pytest.mark.parametrize("row", CHECKED, ids=ids(CHECKED))
def test_erratum_has_a_negative_test_that_runs_its_bad_form(row):
    assert (ROOT / row["bad form"]).is_file(), row["bad form"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
                           row["negative test"]], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    tests = [line for line in proc.stdout.splitlines() if "::" in line]
    assert tests, f"{row['negative test']} collects no test"
    name = Path(row["bad form"]).name
    source = (ROOT / row["negative test"].split("::")[0]).read_text(encoding="utf-8")
    assert any(name in t for t in tests) or name in source, \
        f"{row['negative test']} does not run {row['bad form']}"
