"""Every how-to page has a walk: a test that runs the page's steps the way its reader runs them.

Two kinds count, and the report says which each page has:

* a chapter walk (``@pytest.mark.walk(CHAPTER)``, checks/walkthrough/): every page of the chapter's toctree, its
  steps in page order on a clean host, from the checkout's snippets, each step as root in a login shell;
* a reader walk (``@pytest.mark.reader_walk(PAGE)``): the page's steps from the built site's downloads, installed
  where the page says, under the service manager or cron the page installs them in, as the users it names.

A page with neither fails this check, and so does a page listed in ``NOT_WALKED`` that has one (the list would
hide nothing then). ``NOT_WALKED`` is what is left to do, each entry with what its walk lacks: the build says so
rather than pretending. The marks are read from the test files' source (ast), so this check needs no collection.
"""

from __future__ import annotations

import ast

import pytest

from zrunbook import ROOT, walkthrough

DOCS = ROOT / "docs"
CHECKS = ROOT / "checks"
# Pages without a walk yet (issue 55), and what their steps are checked by instead.
NOT_WALKED: dict[str, str] = {}


def marks(name: str) -> dict[str, list[str]]:
    """{first argument: [test files]} of every ``pytest.mark.<name>("...")`` in the checks."""
    found: dict[str, list[str]] = {}
    for path in sorted(CHECKS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "mark"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                found.setdefault(node.args[0].value, []).append(str(path.relative_to(ROOT)))
    return found


def pages() -> list[str]:
    return sorted(str(p.relative_to(DOCS).with_suffix("")) for p in (DOCS / "how-to").rglob("*.md")
                  if p.name != "index.md")


def runnable(page: str) -> tuple[int, int]:
    """(steps a chapter walk runs on the amd64 host, steps it passes over there) of a page."""
    acting = [s for s in walkthrough.steps(page, walkthrough.DEBIAN_TABS).steps if s.acts]
    over = [s for s in acting if s.needs in walkthrough.LACKS["amd64"]]
    return len(acting) - len(over), len(over)


def walks() -> dict[str, list[str]]:
    """{page: the kinds of walk it has}. A chapter walk says how many of the page's steps it runs on amd64: a page
    whose every step needs what no check host has (IBM Z, an IBM product) is walked only in that it is listed."""
    kinds: dict[str, list[str]] = {}
    for chapter, files in marks("walk").items():
        for page in walkthrough.chapter(chapter):
            ran, over = runnable(page)
            kinds.setdefault(page, []).append(f"chapter walk of {chapter} ({', '.join(files)}): {ran} step(s) run on "
                                              f"amd64, {over} passed over")
    for page, files in marks("reader_walk").items():
        kinds.setdefault(page, []).append(f"reader walk ({', '.join(files)})")
    return kinds


def unwalked(all_pages: list[str], kinds: dict[str, list[str]]) -> list[str]:
    """The pages with no walk that NOT_WALKED does not list either: what this check fails for."""
    return [p for p in all_pages if p not in kinds and p not in NOT_WALKED]


def test_every_how_to_page_has_a_walk_or_says_what_its_walk_lacks():
    kinds = walks()
    print()
    for page in pages():
        print(f"{page}: {'; '.join(kinds.get(page, [])) or 'NOT WALKED: ' + NOT_WALKED.get(page, '?')}")
    only_listed = [p for p in pages() if p in kinds and all(" 0 step(s) run on amd64" in k for k in kinds[p])]
    print(f"{len(only_listed)} page(s) walked only by listing their steps (no step runs on a check host): "
          f"{', '.join(only_listed)}")
    missing = unwalked(pages(), kinds)
    assert missing == [], f"how-to pages with no walk test (mark one with @pytest.mark.reader_walk): {missing}"
    stale = sorted(p for p in NOT_WALKED if p in kinds or p not in pages())
    assert stale == [], f"NOT_WALKED lists pages that have a walk or no longer exist: {stale}"
    unknown = sorted(p for p in marks("reader_walk") if p not in pages())
    assert unknown == [], f"reader_walk marks name pages that do not exist: {unknown}"


@pytest.mark.negative(invariant="every how-to page has a walk test or says what its walk lacks",
                      expects="a how-to page no walk names and NOT_WALKED does not list is reported")
def test_the_coverage_check_fails_for_a_page_without_a_walk():
    """The negative case: a how-to page that no walk names and NOT_WALKED does not list is reported."""
    kinds = walks()
    fake = "how-to/a-page-nobody-walks"
    assert unwalked([*pages(), fake], kinds) == [fake]
    # and a reader walk's mark taken away: its page is reported
    without = {p: [k for k in ks if "reader walk" not in k] for p, ks in kinds.items()}
    assert "how-to/renew-automatically" in unwalked(pages(), {p: ks for p, ks in without.items() if ks})
    assert any("reader walk" in k for k in kinds.get("how-to/renew-automatically", [])), kinds
