"""``python -m zrunbook where PATH`` (zrunbook/where.py) answers for every snippet and for a test, from files only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from zrunbook import ROOT, ledger, where
from zrunbook.snippets import all_snippets

# where reads every snippet (their digests against the last run's results, where a run left results here)
pytestmark = pytest.mark.uses("**/*")


def test_where_answers_for_every_snippet_with_its_pages_and_checks():
    for rel in all_snippets():
        found = where.where(rel)
        assert found.pages, f"{rel}: no page"
        assert found.checks, f"{rel}: no check"


def test_the_token_init_step_names_its_pages_tests_counter_examples_and_the_states_it_keys():
    found = where.where("crypto/token/init-token.sh")
    assert ("how-to/crypto/03-opencryptoki", "snippet") in {(page, kind) for page, _, kind in found.pages}
    assert any(c["checker"] == "testinfra" and c["host"] == "debian13-amd64" and
               c["test"].startswith("checks/crypto/test_init_token.py::") for c in found.checks)
    assert any(n.startswith("shellcheck rejects checks/static/bad/") for n in found.negatives), found.negatives
    assert any(n.startswith("testinfra rejects checks/crypto/bad/init-token-without-user-pin.sh (")
               for n in found.negatives)
    assert "ihs-token-key" in {s.name for s in found.states}


def test_a_check_on_the_s390x_host_says_why_it_runs_there_and_others_run_on_amd64_only():
    """The s390x host runs only tests declared arch_dependent (checks/hosts/plugin.py); each says why."""
    found = where.where("crypto/token/init-token.sh")
    on_s390x = [c for c in found.checks if c["host"] == "debian13-s390x"]
    assert on_s390x
    assert all(c["why"] for c in on_s390x), on_s390x
    said = where.report("crypto/token/init-token.sh")
    assert "(on s390x because the ICA token (libica) on s390x, the soft token elsewhere)" in said
    doctor = where.report("checks/verify/test_doctor.py")
    assert "debian13-amd64" in doctor
    assert "debian13-s390x" not in doctor  # nothing in it differs by architecture


def test_where_names_the_program_that_ran_as_the_badge_does():
    said = where.report("db2/tls/db2dsdriver.cfg")
    assert "db2cli · ran (GSKit 8.0.60.5) · debian13-amd64" in said, said


def test_a_validator_s_facts_table_is_named():
    found = where.where("db2/bufferpool/set-buffer-pool.clp")
    assert "facts/db2/clp-keywords.csv" in found.facts, found.facts


def test_an_outcome_check_lists_the_tests_that_break_its_snippet():
    found = where.where("crypto/verify/check-tls-protocols.sh")
    assert any("test_the_weakened_target_fails_exactly_the_protocol_hsts_and_file_steps" in n for n in found.negatives)


def test_a_test_path_lists_the_snippets_it_checks():
    said = where.report("checks/verify/test_verify_pins.py")
    assert "snippets/crypto/verify/check-key-in-token.sh · verify · debian13-amd64" in said


@pytest.mark.negative(invariant="where takes a snippet or a test",
                      expects="exit status 2: is neither a file under snippets/ nor a test under checks/")
@pytest.mark.parametrize("path", ["no/such/file.sh", "checks/no_such_test.py", "README.md"])
def test_a_path_that_is_neither_is_refused_with_exit_status_2(path):
    done = subprocess.run([sys.executable, "-m", "zrunbook", "where", path], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    assert done.returncode == 2
    assert "is neither a file under snippets/ nor a test under checks/" in done.stderr


def test_where_lists_the_tests_a_run_observed_reading_the_snippet_and_marks_the_undeclared(tmp_path):
    """A test that reads a snippet through a helper (here the Apache site step, read by serve_token) without
    declaring it is listed with a star; a test that declares it without one; no results, no list."""
    results = tmp_path / "results.json"
    ledger.save({"format": 1, "snippets": {}, "inputs": {
        "checks/ihs/test_x.py::test_declares[debian13-amd64]": {
            "outcome": "passed", "snippets": {"crypto/token/init-token.sh": "0" * 64}},
        "checks/ihs/test_x.py::test_reads_through_a_helper[debian13-amd64]": {
            "outcome": "failed", "snippets": {"crypto/token/init-token.sh": "0" * 64}},
        "checks/ihs/test_x.py::test_other[debian13-amd64]": {"outcome": "passed", "snippets": {}}}}, results)
    found = where.observed_by("crypto/token/init-token.sh", {"checks/ihs/test_x.py::test_declares[debian13-amd64]"},
                              results)
    assert found == [
        {"test": "checks/ihs/test_x.py::test_declares[debian13-amd64]", "outcome": "passed", "declared": True},
        {"test": "checks/ihs/test_x.py::test_reads_through_a_helper[debian13-amd64]", "outcome": "failed",
         "declared": False}]
    assert where.observed_by("crypto/token/init-token.sh", set(), tmp_path / "none.json") is None
