"""The one outcome rule, how a run's coverage and results are recorded, and the committed declarations
(zrunbook/ledger.py). Every case builds its own results; none reads build/results.json."""

import pytest

from zrunbook import ledger

NOW, OLD = "a" * 64, "b" * 64
T1, T2 = "checks/x.py::t1", "checks/x.py::t2"


def run(test, outcome="passed", sha=NOW, checker="shellcheck", host=None):
    return {"checker": checker, "host": host, "test": test, "outcome": outcome, "sha256": sha,
            "date": "2026-11-23", "commit": "abc1234"}


@pytest.mark.parametrize(("tests", "runs", "expected"), [
    ([T1], [run(T1)], "passed"),
    ([T1, T2], [run(T1), run(T2)], "passed"),
    ([T1], [run(T1, sha=OLD)], "stale"),
    ([T1, T2], [run(T1), run(T2, sha=OLD)], "stale"),  # one current pass and one stale result: never "passed"
    ([T1, T2], [run(T1, "failed"), run(T2, sha=OLD)], "failed"),  # a failure of these bytes outranks stale
    ([T1], [run(T1, "failed", sha=OLD)], "stale"),  # a failure of other bytes says nothing of these
    ([T1], [run(T1, "skipped")], "failed"),  # a skip is not a pass
    ([T1, T2], [run(T1)], "not run"),  # a test that checks the file has no result yet
    ([T1], [], "not run"),
    ([], [run(T1)], "not run"),  # a result of a test that no longer checks the file counts for nothing
])
def test_outcome(tests, runs, expected):
    assert ledger.outcome(tests, runs, NOW) == expected


def test_a_complete_collection_forgets_runs_no_current_check_stands_for():
    data = {"format": 1, "snippets": {"a.sh": {
        "checks": [{"checker": "old-name", "host": None, "test": T1}],
        "runs": [run(T1, checker="old-name"), run(T2)]}}}
    ledger.record_checks(data, {"a.sh": [{"checker": "shellcheck", "host": None, "test": T1}]}, complete=True)
    assert data["snippets"]["a.sh"]["runs"] == []  # the renamed checker's run and the removed test's run
    assert ledger.entries(data, "a.sh", NOW)[0]["outcome"] == "not run"


def test_a_narrowed_collection_keeps_the_checks_it_did_not_see():
    data = {"format": 1, "snippets": {"a.sh": {"checks": [{"checker": "testinfra", "host": "h", "test": T2}],
                                               "runs": [run(T2, checker="testinfra", host="h")]}}}
    ledger.record_checks(data, {"a.sh": [{"checker": "shellcheck", "host": None, "test": T1}]}, complete=False)
    assert {c["test"] for c in data["snippets"]["a.sh"]["checks"]} == {T1, T2}
    assert len(data["snippets"]["a.sh"]["runs"]) == 1


def test_a_new_result_replaces_the_earlier_one_of_the_same_test():
    data = {"format": 1, "snippets": {}}
    ledger.record_runs(data, [{**run(T1, "failed", OLD), "snippet": "a.sh"}])
    ledger.record_runs(data, [{**run(T1), "snippet": "a.sh"}])
    assert [r["outcome"] for r in data["snippets"]["a.sh"]["runs"]] == ["passed"]


@pytest.mark.negative(invariant="results.json's format",
                      expects="a results file of another format is refused (format 99)")
def test_results_of_another_format_are_refused(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"format": 99, "snippets": {}}')
    with pytest.raises(ValueError, match="format 99"):
        ledger.load(path)


def test_results_live_under_build_and_nothing_at_the_top_is_rewritten_by_a_run():
    from zrunbook import BUILD, ROOT

    assert ledger.RESULTS.parent == BUILD
    assert ledger.DECLARATIONS.parent == ROOT / "zrunbook"
    assert not (ROOT / "ledger.json").exists(), "ledger.json is gone: results go to build/results.json"


COVERAGE = {"b.sh": [{"checker": "testinfra", "host": "debian13-s390x", "test": "checks/b.py::t[debian13-s390x]"},
                     {"checker": "shellcheck", "host": None, "test": T1}],
            "a.sh": [{"checker": "shellcheck", "host": None, "test": T2}]}


def test_declarations_are_one_sorted_line_each_and_read_back_as_they_were_collected(tmp_path):
    path = tmp_path / "declarations.tsv"
    ledger.save_declarations(COVERAGE, path)
    first = path.read_bytes()
    lines = first.decode().splitlines()
    assert lines[0].startswith("#")
    assert "make declarations" in lines[0]
    assert lines[1:] == sorted(lines[1:])
    assert len(lines) == 4
    assert "b.sh\tshellcheck\tstatic\t" + T1 in lines
    back = ledger.load_declarations(path)
    assert ledger.outdated(COVERAGE, back) == []
    assert back["b.sh"][0]["host"] is None  # static reads back as no host, as the plugin collects it
    ledger.save_declarations(dict(reversed(list(back.items()))), path)  # same coverage, other order
    assert path.read_bytes() == first


def test_declarations_that_differ_from_the_collection_name_each_line(tmp_path):
    collected = {**COVERAGE, "c.sh": [{"checker": "shellcheck", "host": None, "test": "checks/c.py::t"}]}
    declared = {"a.sh": COVERAGE["a.sh"], "b.sh": COVERAGE["b.sh"][:1]}
    assert ledger.outdated(collected, declared) == [
        f"+ b.sh  shellcheck  static  {T1}", "+ c.sh  shellcheck  static  checks/c.py::t"]
    assert ledger.outdated(declared, collected)[0].startswith("- ")
    assert ledger.outdated(collected, declared, limit=1) == [f"+ b.sh  shellcheck  static  {T1}", "... and 1 more"]


def test_a_check_on_s390x_keeps_its_reason_through_the_declarations(tmp_path):
    path = tmp_path / "declarations.tsv"
    why = "the ICA token on s390x"
    coverage = {"a.sh": [{"checker": "testinfra", "host": "debian13-s390x", "test": T1, "why": why},
                         {"checker": "testinfra", "host": "debian13-amd64", "test": T2}]}
    ledger.save_declarations(coverage, path)
    assert f"a.sh\ttestinfra\tdebian13-s390x\t{T1}\t{why}" in path.read_text().splitlines()
    assert sorted(ledger.load_declarations(path)["a.sh"], key=str) == sorted(coverage["a.sh"], key=str)


def test_a_malformed_declaration_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "declarations.tsv"
    path.write_text("# header\na.sh\tshellcheck\n")
    with pytest.raises(ValueError, match="declarations.tsv:2:"):
        ledger.load_declarations(path)


def test_without_results_every_declared_check_is_not_run_and_results_count_only_for_declared_tests(tmp_path):
    declared = tmp_path / "declarations.tsv"
    ledger.save_declarations(COVERAGE, declared)
    fresh = ledger.read(tmp_path / "missing.json", declared)  # a fresh clone: no build/results.json
    assert [e["outcome"] for rel in COVERAGE for e in ledger.entries(fresh, rel, NOW)] == ["not run"] * 3
    assert ledger.checked_on(ledger.entries(fresh, "a.sh", NOW)) is None
    results = {"format": 1, "snippets": {"a.sh": {"checks": [], "runs": [run(T2), run("checks/gone.py::t")]}}}
    ledger.save(results, tmp_path / "results.json")
    seen = ledger.read(tmp_path / "results.json", declared)
    assert [e["outcome"] for e in ledger.entries(seen, "a.sh", NOW)] == ["passed"]
    assert ledger.checked_on(ledger.entries(seen, "a.sh", NOW)) == ("2026-11-23", "abc1234")
    assert ledger.entries(seen, "c.sh", NOW) == []  # a run of an undeclared test is no badge


def test_the_committed_declarations_cover_every_snippet():
    """A fresh clone's guide names a checker for each file (make check's declarations-are-current item proves
    the file matches the collection)."""
    from zrunbook.snippets import all_snippets

    declared = ledger.load_declarations()
    missing = [rel for rel in all_snippets() if rel not in declared]
    assert missing == [], f"not in zrunbook/declarations.tsv: {missing}; run `{ledger.REGENERATE}`"


@pytest.mark.parametrize(("require", "hosts", "expected"), [
    (True, "", True), (True, "debian13-s390x,debian13-amd64", True),
    (True, "debian13-amd64", False),  # the s390x results must stay: that host's tests were not collected
    (False, "", False),  # CHECKS=... or SNIPPET=...: a part of the suite
])
def test_only_a_whole_suite_run_on_every_host_may_forget_checks(monkeypatch, require, hosts, expected):
    from types import SimpleNamespace

    from checks.zrunbook_plugin import whole_suite

    monkeypatch.setenv("ZR_HOSTS", hosts)
    assert whole_suite(SimpleNamespace(getoption=lambda name: require)) is expected


@pytest.mark.negative(invariant="only a whole run that ran to its end forgets recorded inputs",
                      expects="an interrupted or unusable whole run keeps every verdict recorded before it")
@pytest.mark.parametrize(("status", "expected"), [
    (pytest.ExitCode.OK, True), (pytest.ExitCode.TESTS_FAILED, True),
    (pytest.ExitCode.INTERRUPTED, False),  # killed at 03:52 on 2026-11-29, it wiped every recorded input
    (pytest.ExitCode.INTERNAL_ERROR, False), (pytest.ExitCode.USAGE_ERROR, False)])
def test_an_interrupted_run_forgets_no_recorded_input(monkeypatch, status, expected):
    from types import SimpleNamespace

    from checks.zrunbook_plugin import ran_through

    monkeypatch.setenv("ZR_HOSTS", "")
    assert ran_through(SimpleNamespace(getoption=lambda name: True), status) is expected
    recorded = {"inputs": {"a": {"outcome": "passed"}, "b": {"outcome": "passed"}}}
    ledger.record_inputs(recorded, {}, complete=ran_through(SimpleNamespace(getoption=lambda name: True), status))
    assert set(recorded["inputs"]) == ({"a", "b"} if not expected else set())


@pytest.mark.uses("crypto/packages/verify-packages.sh")
def test_a_narrowed_run_merges_its_results_into_the_file_a_whole_run_wrote(tmp_path):
    """make check CHECKS=... after make check: the other snippets' results stay, this one's is replaced."""
    from types import SimpleNamespace

    from checks.zrunbook_plugin import ResultsRecorder
    from zrunbook import ROOT

    path = tmp_path / "results.json"
    rel, other = "crypto/packages/verify-packages.sh", "crypto/packages/install-packages-debian.sh"
    earlier = {other: {"checks": [{"checker": "shellcheck", "host": None, "test": T2}], "runs": [run(T2)]},
               rel: {"checks": [], "runs": [run(T1, "failed", OLD)]}}
    ledger.save({"format": 1, "snippets": earlier}, path)
    config = SimpleNamespace(rootpath=ROOT, zr_coverage={rel: [{"checker": "shellcheck", "host": None, "test": T1}]},
                             getoption=lambda name: False)
    recorder = ResultsRecorder(config, path)
    recorder.pytest_runtest_logreport(SimpleNamespace(when="call", outcome="passed", nodeid=T1,
                                                      user_properties=[("zr_snippet", [rel, "shellcheck", None])]))
    recorder.pytest_sessionfinish(SimpleNamespace(exitstatus=pytest.ExitCode.OK))
    merged = ledger.load(path)["snippets"]
    assert [r["outcome"] for r in merged[rel]["runs"]] == ["passed"]
    assert merged[other]["runs"] == [run(T2)]  # a narrowed run keeps what it did not run


@pytest.mark.uses("crypto/packages/verify-packages.sh")
def test_python_m_zrunbook_outcome_on_a_fresh_clone_says_not_run_in_this_build(tmp_path, monkeypatch, capsys):
    from zrunbook.__main__ import main

    monkeypatch.setattr(ledger, "RESULTS", tmp_path / "build" / "results.json")  # no run in this checkout
    monkeypatch.setattr(ledger, "ROOT", tmp_path)
    assert main(["outcome", "crypto/packages/verify-packages.sh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "not run in this build: make check writes build/results.json"
    assert lines[:-1]
    assert all(" · not run  (-, -)" in line for line in lines[:-1])


@pytest.mark.parametrize(("nodeid", "declared"), [
    ("checks/verify/test_verify.py::test_x[debian13-amd64]@verify",
     "checks/verify/test_verify.py::test_x[debian13-amd64]"),
    ("checks/was/test_liberty.py::test_y@liberty", "checks/was/test_liberty.py::test_y"),
    ("checks/ihs/test_z.py::test_z[user@host]", "checks/ihs/test_z.py::test_z[user@host]"),  # an @ in a parameter
    ("checks/test_plain.py::test_plain", "checks/test_plain.py::test_plain"),
])
def test_results_and_coverage_name_a_grouped_test_by_its_declared_id(nodeid, declared):
    # Under --dist loadgroup, xdist adds '@group' to a grouped test's id; declarations are collected without xdist.
    assert ledger.test_id(nodeid) == declared
