"""verify's steps against the guide: each links to a place on a page that shows its snippet, and every outcome
check of the guide is a verify step or says why verify does not run it."""

from __future__ import annotations

import re

import pytest

from zrunbook import ROOT, SNIPPETS
from zrunbook.guide.outcomes import declared
from zrunbook.verify.steps import OUTCOMES_NOT_VERIFIED, STEPS

DOCS = ROOT / "docs"


def shown_after_label(page_text: str, label: str, snippet: str) -> bool:
    """The label ``(LABEL)=`` and, before the next heading, a snippet (or outcome) directive for ``snippet``."""
    m = re.search(rf"^\({re.escape(label)}\)=\n(.*?)(?=^#+ |\Z)", page_text, re.M | re.S)
    return bool(m and re.search(rf"^```{{(snippet|outcome)}} {re.escape(snippet)}$", m.group(1), re.M))


def test_each_step_links_to_its_snippet_on_its_page():
    for step in STEPS:
        page = DOCS / f"{step.page}.md"
        assert (SNIPPETS / step.snippet).is_file(), step.snippet
        assert shown_after_label(page.read_text(encoding="utf-8"), step.label, step.snippet), \
            f"{page}: no ({step.label})= followed by the snippet {step.snippet}"


@pytest.mark.negative(invariant="a verify step's label is followed by its snippet",
                      expects="a label followed by another snippet is not shown_after_label")
def test_the_link_check_rejects_a_label_without_the_snippet():
    text = "(verify-x)=\n## Check\n\n```{snippet} other.sh\n```\n"
    assert not shown_after_label(text, "verify-x", "crypto/verify/check-key-in-token.sh")


def test_every_outcome_check_is_a_verify_step_or_says_why_not():
    steps = {s.snippet for s in STEPS}
    for outcome in declared(DOCS):
        if outcome.snippet:
            assert outcome.snippet in steps or outcome.snippet in OUTCOMES_NOT_VERIFIED, \
                f"{outcome.page}: outcome check {outcome.snippet} is neither a verify step nor in OUTCOMES_NOT_VERIFIED"
    assert set(OUTCOMES_NOT_VERIFIED) <= {o.snippet for o in declared(DOCS)}


def test_each_doctor_signature_links_to_a_place_in_the_guide():
    from zrunbook.verify.doctor import SIGNATURES

    for sig in SIGNATURES:
        text = (DOCS / f"{sig.page}.md").read_text(encoding="utf-8")
        assert re.search(rf"^\({re.escape(sig.label)}\)=\n#+ ", text, re.M), f"{sig.page}: no ({sig.label})= heading"


@pytest.mark.parametrize(("verdict", "recorded"), [("passed", "passed"), ("failed", "failed"),
                                                     ("cannot tell", "cannot tell"), ("crashed", "failed")])
def test_the_reports_keep_cannot_tell_as_a_verdict_of_its_own(verdict, recorded):
    """verify.json and verify.html are made from the rows Reports keeps: a step that could not decide stays
    'cannot tell' although its test failed (it used to be recorded as 'failed'); an error inside verify itself
    (here a verdict verify never gives) is a failure with pytest's words."""
    from types import SimpleNamespace

    from zrunbook.verify.plugin import Reports

    reports = Reports(config=None)
    row = {"host": "web1", "step": "apache-token-signs", "verdict": verdict, "message": "its words"}
    reports.pytest_runtest_logreport(SimpleNamespace(
        when="call", failed=verdict != "passed", user_properties=[("zr_verdict", row)],
        longreprtext="Traceback ...\nE   RuntimeError: verify's own error"))
    assert [r["verdict"] for r in reports.rows] == [recorded]
    if verdict == "crashed":
        assert reports.rows[0]["message"] == "E   RuntimeError: verify's own error"
