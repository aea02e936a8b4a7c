"""The {walked} box's result for one host (docs/_ext/walked.py): from this checkout's results, never "passed"
without a current run of every walked step."""

import sys

import pytest

from checks.sphinx_roots import REPO

sys.path.insert(0, str(REPO / "docs" / "_ext"))
import walked  # noqa: E402  (the guide's extension)

sys.path.pop(0)

HOST, NOW, OLD = "debian13-amd64", "a" * 64, "b" * 64
STEPS = ["x/one.sh", "x/two.sh"]


def results(*runs: tuple[str, str, str]) -> dict:
    """(snippet, sha256, outcome) per walkthrough run on HOST."""
    snippets: dict = {}
    for rel, sha, outcome in runs:
        snippets.setdefault(rel, {"checks": [], "runs": []})["runs"].append(
            {"checker": "walkthrough", "host": HOST, "test": "t", "sha256": sha, "outcome": outcome})
    return {"format": 1, "snippets": snippets}


@pytest.mark.parametrize(("ledger", "expected"), [
    (results(), "not run in this build"),  # a fresh clone
    (results(("x/one.sh", NOW, "passed"), ("x/two.sh", NOW, "passed")), "passed"),
    (results(("x/one.sh", NOW, "passed"), ("x/two.sh", NOW, "failed")), "failed"),
    (results(("x/one.sh", NOW, "passed"), ("x/two.sh", OLD, "passed")), "not run for this version of every step"),
])
def test_the_walk_passes_only_when_every_step_passed_on_its_current_bytes(ledger, expected):
    assert walked.walk_result(ledger, {rel: NOW for rel in STEPS}, STEPS, HOST) == expected


def test_a_walk_is_declared_only_on_the_hosts_whose_walkthrough_test_checks_it():
    """The box says 'not walked there' for s390x when no walkthrough check of the steps is declared there (the
    s390x host runs only walks declared arch_dependent), never 'not run in this build' forever."""
    ledger = {"format": 1, "snippets": {"x/one.sh": {"checks": [
        {"checker": "walkthrough", "host": HOST, "test": "t"},
        {"checker": "shellcheck", "host": None, "test": "s"}], "runs": []}}}
    assert walked.walk_declared(ledger, STEPS, HOST)
    assert not walked.walk_declared(ledger, STEPS, "debian13-s390x")
