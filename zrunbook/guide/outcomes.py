"""Outcome checks: every how-to chapter ends in a check of its purpose that a reader runs, with a negative case.

A page declares one with the ``{outcome}`` directive (docs/_ext/outcome.py)::

    ```{outcome} crypto/verify/check-key-in-token.sh
    :negative: checks/was/test_verify_tls.py::test_the_studys_pkcs12_key_file_fails_both_checks
    This proves that the key the server presents was generated in the token and cannot be exported from it.
    ```

``:negative:`` names one or more tests (blank-separated, without the host in brackets) in which the check is
run against a setup whose purpose is not met and must fail. The declarations (zrunbook/ledger.py) are the proof
that they exist and check this snippet: ``problems()`` rejects a negative test they do not list among the
snippet's checks; ``negative_results()`` reads this checkout's results. Each such test also declares itself with
``@pytest.mark.negative("<the box's snippet>", expects="...")`` (zrunbook/negatives.py; checks/test_negatives.py
and the build hold that the page and the mark agree: ``mark_problems()``), which is what ``where`` lists and the box
shows as what each negative case expects.
Where no check can run on the check hosts (an IBM product on z/OS), ``:not-run-here:`` says why instead of a
snippet, and the page still names what the reader runs.

``declared(docs)`` reads every page; ``missing_chapters(docs)`` names the how-to chapters without one; the
directive and checks/docs/test_outcome_checks.py both use these functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from zrunbook.ledger import REGENERATE
from zrunbook.snippets import expand

DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{outcome\}[ \t]*(\S*)[ \t]*\n((?::[\w-]+:.*\n)*)", re.M)


@dataclass(frozen=True)
class Outcome:
    page: str  # docname, e.g. how-to/was/07-verify-tls
    snippet: str  # path under snippets/, "" when not run here
    negatives: tuple[str, ...]
    not_run_here: str


def parse_options(block: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^:([\w-]+):(.*)$", block, re.M)}


def declared(docs: Path) -> list[Outcome]:
    found = []
    for page in sorted(docs.rglob("*.md")):
        if "_" in page.parts[-2][:1]:
            continue
        for m in DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            options = parse_options(m.group(3))
            found.append(Outcome(page.relative_to(docs).with_suffix("").as_posix(), m.group(2),
                                 tuple(options.get("negative", "").split()), options.get("not-run-here", "")))
    return found


def chapters(docs: Path) -> list[str]:
    return sorted(p.name for p in (docs / "how-to").iterdir() if p.is_dir() and not p.name.startswith("_"))


def missing_chapters(docs: Path) -> list[str]:
    have = {o.page.split("/")[1] for o in declared(docs) if o.page.startswith("how-to/")}
    return [c for c in chapters(docs) if c not in have]


def problems(outcome: Outcome, ledger: dict, snippets: Path) -> list[str]:
    """What is wrong with one declaration: a missing snippet, no negative case, a negative test that does not
    check the snippet (by the declarations' record of which test checks which file)."""
    if not outcome.snippet:
        return [] if outcome.not_run_here else ["an outcome check names neither a snippet nor :not-run-here:"]
    out = []
    if not (snippets / outcome.snippet).is_file():
        out.append(f"outcome check {outcome.snippet!r} is not a file under snippets/")
    if not outcome.negatives:
        out.append(f"outcome check {outcome.snippet!r} names no :negative: test")
    tests = {c["test"].split("[")[0] for c in ledger.get("snippets", {}).get(outcome.snippet, {}).get("checks", [])}
    for test in outcome.negatives:
        if test not in tests:
            out.append(f"negative case {test} does not check {outcome.snippet} (not in the declared checks of the "
                       f"file: mark the test with @pytest.mark.snippet and run {REGENERATE})")
    return out


def mark_problems(outcome: Outcome, marked: dict[str, tuple[str, ...]]) -> list[str]:
    """Each ``:negative:`` test must declare itself negative for the box's snippet: ``marked`` maps a test to the
    snippets (paths or globs) of its ``@pytest.mark.negative`` (zrunbook.negatives.negative_tests())."""
    return [f"negative case {test} is not marked @pytest.mark.negative({outcome.snippet!r}, expects=...) "
            "(zrunbook/negatives.py)" for test in outcome.negatives if outcome.snippet
            and not any(outcome.snippet == p or outcome.snippet in expand(p) for p in marked.get(test, ()))]


def negative_results(outcome: Outcome, ledger: dict, digest: str | None) -> dict[str, list[tuple[str, str]]]:
    """Per negative test: (host, outcome) of its runs on the snippet's current bytes ("not run" when none)."""
    runs = ledger.get("snippets", {}).get(outcome.snippet, {}).get("runs", [])
    result = {}
    for test in outcome.negatives:
        found = [(r.get("host") or "static", r["outcome"]) for r in runs
                 if r["test"].split("[")[0] == test and r.get("sha256") == digest]
        result[test] = sorted(set(found)) or [("-", "not run")]
    return result
