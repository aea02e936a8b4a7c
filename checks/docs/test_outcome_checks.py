"""Every how-to chapter ends in an outcome check with a negative case (the {outcome} directive, zrunbook/guide/
outcomes.py): the chapters are read from docs/how-to, the outcome checks from the pages, and the committed
declarations (zrunbook/declarations.tsv, no run needed) prove that each negative test checks the snippet it is
named for. The build fails on the same problems; these tests also prove that the rules reject what they must."""

from __future__ import annotations

from pathlib import Path

import pytest

from zrunbook import ROOT, SNIPPETS, ledger
from zrunbook.guide import outcomes

DOCS = ROOT / "docs"


def test_every_how_to_chapter_has_an_outcome_check():
    assert outcomes.chapters(DOCS), "no how-to chapters found"
    assert outcomes.missing_chapters(DOCS) == []


@pytest.mark.negative(invariant="every outcome box names its snippet and negative cases the declarations back",
                      expects="a box whose snippet, results or negatives do not agree is a problem")
def test_every_outcome_check_names_a_snippet_and_negative_cases_the_declarations_back():
    data = ledger.read(results=None)
    found = outcomes.declared(DOCS)
    print(f"{len(found)} outcome checks:", ", ".join(f"{o.page} -> {o.snippet or 'not run here'}" for o in found))
    problems = [f"{o.page}: {p}" for o in found for p in outcomes.problems(o, data, SNIPPETS)]
    assert problems == []
    assert all(o.negatives for o in found if o.snippet)


def test_a_chapter_without_an_outcome_check_is_found(tmp_path):
    for chapter in ("alpha", "beta"):
        (tmp_path / "how-to" / chapter).mkdir(parents=True)
        (tmp_path / "how-to" / chapter / "index.md").write_text("# A chapter\n", encoding="utf-8")
    (tmp_path / "how-to" / "alpha" / "check.md").write_text(
        "# Check\n\n```{outcome} x/check.sh\n:negative: checks/x.py::test_fails\nThis proves x.\n```\n",
        encoding="utf-8")
    assert outcomes.missing_chapters(tmp_path) == ["beta"]


@pytest.mark.negative(invariant="an outcome box's negative tests check its snippet",
                      expects="a negative test that does not check the snippet, no :negative: test, or no snippet is a "
                              "problem")
def test_a_negative_case_that_does_not_check_the_snippet_is_rejected():
    real = outcomes.Outcome("how-to/was/x", "crypto/verify/check-key-in-token.sh",
                            ("checks/db2/test_db2_tls.py::test_a_truststore_with_another_ca_refuses_the_server",), "")
    problems = outcomes.problems(real, ledger.read(results=None), SNIPPETS)
    assert len(problems) == 1
    assert "does not check crypto/verify/check-key-in-token.sh" in problems[0]
    none = outcomes.Outcome("how-to/was/x", "crypto/verify/check-key-in-token.sh", (), "")
    assert outcomes.problems(none, ledger.read(results=None), SNIPPETS) == [
        "outcome check 'crypto/verify/check-key-in-token.sh' names no :negative: test"]
    assert outcomes.problems(outcomes.Outcome("p", "", (), ""), {}, Path("/nonexistent")) == [
        "an outcome check names neither a snippet nor :not-run-here:"]
