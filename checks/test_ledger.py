"""The ledger's one outcome rule, and how a run's coverage and results are recorded (zrunbook/ledger.py)."""

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


def test_a_ledger_of_another_format_is_refused(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text('{"format": 99, "snippets": {}}')
    with pytest.raises(ValueError, match="format 99"):
        ledger.load(path)


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
