"""The one model of negative cases (zrunbook/negatives.py): every bad file declares which snippet it negates, which
checker runs it and what must happen; the registry's bad globs, the errata's bad forms and the outcome boxes'
``:negative:`` tests agree with those declarations. What a static checker must report is compared with its
validator's problems in checks/test_static_checkers.py."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest

from zrunbook import ROOT, SNIPPETS, ledger, negatives, registry
from zrunbook.guide import outcomes
from zrunbook.guide.outcomes import declared
from zrunbook.snippets import expand

ERRATA = ROOT / "facts" / "errata" / "errata.csv"


@pytest.mark.parametrize("rel", negatives.bad_files())
def test_every_bad_file_declares_what_it_negates_which_checker_runs_it_and_what_must_happen(rel):
    assert negatives.problems(negatives.declaration(rel), registry.load(deep=False)) == []


def test_the_registry_bad_globs_and_the_declarations_name_the_same_files():
    """A static checker's ``bad`` globs and the files that declare that checker are the same set, both ways."""
    static = registry.static()
    globbed = set(registry.bad_cases())
    said = {(e.checker, d.path) for d in negatives.declarations() for e in d.expects if e.checker in static}
    assert sorted(said - globbed) == [], "declared for a static checker whose bad globs miss them"
    assert sorted(globbed - said) == [], "matched by a bad glob, but the file does not declare the checker"


def test_an_erratum_s_bad_form_declares_the_erratum_s_checker_and_negative_test():
    """The errata's ``checker`` and ``negative test`` columns are the bad form's declaration (a column naming a
    module names the module of the declared test)."""
    for row in csv.DictReader(ERRATA.open(encoding="utf-8")):
        if not row["bad form"]:
            continue
        found = negatives.declaration(row["bad form"].removeprefix("checks/"))
        tests = {e.test for e in found.expects if e.checker == row["checker"]}
        assert tests, (row["id"], f"{row['bad form']} does not declare checker {row['checker']}")
        wanted = row["negative test"]
        assert wanted in tests or any(t.startswith(wanted + "::") for t in tests), (row["id"], wanted, tests)


def _marked() -> dict[str, tuple[str, ...]]:
    return {t.test: t.snippets for t in negatives.negative_tests() if t.snippets}


def test_every_negative_an_outcome_box_names_is_marked_negative_for_the_box_s_snippet():
    """The pages' ``:negative:`` option and ``@pytest.mark.negative`` say the same: each test a box names carries
    the mark, and the mark names the box's snippet (or a glob matching it); the guide's build holds the same."""
    marked = _marked()
    assert [f"{o.page}: {p}" for o in declared(ROOT / "docs") for p in outcomes.mark_problems(o, marked)] == []


def test_a_box_naming_a_test_not_marked_for_its_snippet_is_a_problem():
    box = outcomes.Outcome("how-to/x", "crypto/verify/check-key-in-token.sh",
                           ("checks/was/test_verify_tls.py::test_the_studys_pkcs12_key_file_fails_both_checks",
                            "checks/crypto/test_ap_ready.py::test_ap_ready_stops_when_no_queue_is_assigned"), "")
    assert outcomes.mark_problems(box, _marked()) == [
        "negative case checks/crypto/test_ap_ready.py::test_ap_ready_stops_when_no_queue_is_assigned is not marked "
        "@pytest.mark.negative('crypto/verify/check-key-in-token.sh', expects=...) (zrunbook/negatives.py)"]


def test_every_negative_mark_names_snippets_that_exist_and_says_what_must_happen():
    for test, patterns in _marked().items():
        assert all(expand(p, SNIPPETS) for p in patterns), (test, patterns)
    assert all(t.expects for t in negatives.negative_tests() if t.snippets or t.invariant)
    assert [t.test for t in negatives.negative_tests() if t.snippets and t.invariant] == [], \
        "a mark names snippets or the project's own rule (invariant=), not both"


def test_a_negative_mark_names_only_snippets_the_test_declares_it_checks_or_uses():
    """The mark says which of the test's declared snippets it makes fail (zrunbook/declarations.tsv, or a
    ``@pytest.mark.uses`` of the test: a finding about a step it runs without judging): a test cannot be a negative
    case of a snippet it does not run."""
    checked = defaultdict(set)
    for rel, checks in ledger.load_declarations().items():
        for check in checks:
            checked[check["test"].split("[")[0]].add(rel)
    for test, patterns in negatives.uses_marks().items():
        checked[test] |= {rel for p in patterns for rel in expand(p, SNIPPETS)}
    wrong = [(test, p) for test, patterns in _marked().items() for p in patterns
             if not set(expand(p, SNIPPETS)) & checked[test]]
    assert wrong == [], "marked negative for a snippet the test does not declare (@pytest.mark.snippet or uses)"
    assert "ihs/apache/apache-tls-session-cache.conf" in checked[
        "checks/ihs/test_apache_session_cache.py::test_a_graceful_restart_that_switches_the_cache_off_stops_httpd"]


def test_a_test_negative_by_name_is_unmarked_until_it_declares_a_snippet_or_the_project_s_own_rule(tmp_path):
    """A test of the project's own machinery declares the rule it negates with ``invariant=``; one that says
    nothing is still listed."""
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "test_x.py").write_text(
        "import pytest\n\n\n"
        "def test_the_lock_refuses_a_second_holder():\n    pass\n\n\n"
        "@pytest.mark.negative(invariant='one holder of the lock', expects='a stale holder is refused')\n"
        "def test_the_lock_refuses_a_stale_holder():\n    pass\n\n\n"
        "@pytest.mark.negative('x/step.sh', expects='the step fails')\n"
        "def test_the_step_fails_without_its_input():\n    pass\n", encoding="utf-8")
    assert negatives.unmarked(tmp_path / "checks") == ["checks/test_x.py::test_the_lock_refuses_a_second_holder"]
    found = {t.test.split("::")[1]: t for t in negatives.negative_tests(tmp_path / "checks")}
    assert found["test_the_lock_refuses_a_stale_holder"].invariant == "one holder of the lock"
    assert found["test_the_lock_refuses_a_stale_holder"].snippets == ()


def test_every_test_negative_by_name_declares_what_it_negates():
    """Every test whose name says it expects a failure declares the snippet or the project's own rule it negates
    (or a bad file names it as its test); a test negative only by accident of its name is renamed."""
    assert negatives.unmarked() == [], \
        "add @pytest.mark.negative(SNIPPET or invariant=RULE, expects=...) (zrunbook/negatives.py)"


# --- the header check itself rejects what it must ----------------------------------------------------------------

def tree(tmp_path: Path, name: str, text: str) -> tuple[Path, Path]:
    checks, snippets = tmp_path / "checks", tmp_path / "snippets"
    (snippets / "x").mkdir(parents=True)
    (snippets / "x" / "step.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (checks / "x" / "bad").mkdir(parents=True)
    (checks / "x" / "bad" / name).write_text(text, encoding="utf-8")
    return checks, snippets


def found(tmp_path: Path, name: str, text: str) -> list[str]:
    checks, snippets = tree(tmp_path, name, text)
    bad = negatives.declaration(f"x/bad/{name}", checks, listed={})
    return negatives.problems(bad, registry.load(deep=False), snippets, checks)


GOOD = "#!/bin/sh\n# negates: x/step.sh\n# checker: shellcheck\n# rejects: SC2086\necho $1\n"


def test_a_well_formed_header_passes(tmp_path):
    assert found(tmp_path, "good.sh", GOOD) == []
    bad = negatives.header(GOOD)
    assert bad[0] == {"negates": "x/step.sh"}
    assert bad[1] == [negatives.Expect("shellcheck", "SC2086")]


@pytest.mark.parametrize(("name", "text", "message"), [
    ("plain.sh", "#!/bin/sh\necho $1\n", "checks/x/bad/plain.sh: no negative-case header"),
    ("gone.sh", GOOD.replace("x/step.sh", "x/gone.sh"), "negates 'x/gone.sh', which matches no file under snippets/"),
    ("who.sh", GOOD.replace("shellcheck", "no-such-checker"),
     "checker 'no-such-checker' is not in zrunbook/checkers.toml"),
    ("mute.sh", GOOD.replace("# rejects: SC2086\n", ""), "say what shellcheck must report (rejects:)"),
    ("host.sh", GOOD.replace("shellcheck", "testinfra"), "testinfra runs in a test: name the test that runs the file"),
    ("twice.sh", GOOD.replace("# rejects: SC2086\n", "# rejects: SC2086\n# rejects: SC2046\n"),
     "rejects is given twice for checker shellcheck"),
    ("nowhere.sh", GOOD.replace("# rejects: SC2086\n", "# rejects: x\n# test: checks/x/test_none.py::test_y\n"),
     "test checks/x/test_none.py::test_y: no file checks/x/test_none.py"),
    ("data.csv", "a,b\n1,2\n", "a .csv file has no comment syntax here: declare it in checks/negatives.toml"),
])
def test_the_header_check_names_what_is_wrong(tmp_path, name, text, message):
    assert any(message in p for p in found(tmp_path, name, text)), found(tmp_path, name, text)


def test_a_host_checker_s_rejects_must_be_what_its_test_asserts(tmp_path):
    checks, snippets = tree(tmp_path, "host.sh", GOOD.replace("shellcheck", "testinfra").replace(
        "# rejects: SC2086\n", "# rejects: Address already in use\n# test: checks/x/test_host.py::test_refused\n"))
    test = checks / "x" / "test_host.py"
    test.write_text("def test_refused():\n    assert 'Address in use' in ''\n", encoding="utf-8")
    bad = negatives.declaration("x/bad/host.sh", checks, listed={})
    said = negatives.problems(bad, registry.load(deep=False), snippets, checks)
    assert any("rejects 'Address already in use' is in neither checks/x/test_host.py" in p for p in said), said
    test.write_text("def test_refused():\n    assert 'Address already in use' in ''\n", encoding="utf-8")
    assert negatives.problems(bad, registry.load(deep=False), snippets, checks) == []


def test_a_manifest_entry_declares_a_file_without_comments_and_a_part_of_entry_another_s(tmp_path):
    checks, snippets = tree(tmp_path, "runs.csv", "a,b\n")
    (checks / "x" / "bad" / "summary.csv").write_text("a,b\n", encoding="utf-8")
    listed = {"x/bad/summary.csv": {"negates": "x/step.sh", "checker": "shellcheck", "rejects": "SC2086"},
              "x/bad/runs.csv": {"part-of": "x/bad/summary.csv"}}
    for rel in ("x/bad/summary.csv", "x/bad/runs.csv"):
        bad = negatives.declaration(rel, checks, listed)
        assert bad.where == "manifest"
        assert negatives.problems(bad, registry.load(deep=False), snippets, checks, listed) == []
    listed["x/bad/runs.csv"] = {"part-of": "x/bad/gone.csv"}
    bad = negatives.declaration("x/bad/runs.csv", checks, listed)
    assert negatives.problems(bad, registry.load(deep=False), snippets, checks, listed) == [
        "checks/x/bad/runs.csv: part-of names x/bad/gone.csv, which is no bad file under checks/"]


def test_the_static_comparison_names_a_rejection_that_says_something_else():
    bad = negatives.BadFile("x/bad/a.sh", ("x/step.sh",), (negatives.Expect("shellcheck", "SC2086"),), "header")
    assert negatives.rejection_problem(bad, "shellcheck", ["a.sh:2:1: note: ... [SC2086]"]) is None
    assert negatives.rejection_problem(bad, "shellcheck", ["a.sh:2:1: note: ... [SC2046]"]) == (
        "shellcheck rejected checks/x/bad/a.sh, but none of its problems contains 'SC2086' (the header's rejects:): "
        "['a.sh:2:1: note: ... [SC2046]']")
    assert negatives.rejection_problem(bad, "shellcheck", []) == "shellcheck accepted checks/x/bad/a.sh"
    assert "does not declare checker insecure-tls" in negatives.rejection_problem(bad, "insecure-tls", ["x"])


def test_where_lists_a_snippet_s_bad_files_and_negative_tests():
    said = negatives.of("crypto/verify/check-key-in-token.sh")
    assert any(line.startswith("checks/was/test_verify_tls.py::test_the_studys_pkcs12_key_file_fails_both_checks")
               for line in said), said
    said = negatives.of("was/pkcs11/cex3config-2013.cfg")
    assert ("sunpkcs11 rejects checks/was/bad/key-in-wrong-case.cfg (Unknown keyword 'SlotListIndex') in "
            "checks/was/test_pkcs11_provider.py::test_sunpkcs11_rejects_the_config_mistake_in (erratum E06)"
            ) in said, said

