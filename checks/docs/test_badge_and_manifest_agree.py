"""A page's badges and the deployer's bundle manifest say the same outcome for the same bytes.

Both ask ``zrunbook.ledger.entries``: the badges in docs/_ext/badges.py, the manifest in zrunbook/bundle.py.
A small project declares one check per snippet, and its results (written here, never the repository's) hold a
run of other bytes (stale), a passed run and a failed run of the current bytes; the built page and
``bundle.manifest`` must both say stale, passed and failed. Without results (a fresh clone) both say "not run"
for every declared check, and the page says "not run in this build". The last case replaces the badges' rule
with one that reads the newest run whatever bytes it checked, and shows the agreement check rejects it: a badge
for a stale file must never read "passed".
"""

import hashlib
import sys

import pytest

from checks.sphinx_roots import FENCE, REPO
from zrunbook import bundle, ledger

sys.path.insert(0, str(REPO / "docs" / "_ext"))
import badges  # noqa: E402  (the guide's extension: the very module the build loads, from sys.modules)

sys.path.pop(0)

SNIPPETS = {"crypto/stale.sh": "stale", "crypto/passed.sh": "passed", "crypto/failed.sh": "failed"}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _record(rel: str, expected: str, data: bytes) -> dict:
    test = f"checks/crypto/test_x.py::test_{rel.split('/')[-1].removesuffix('.sh')}"
    checked = b"#!/usr/bin/env bash\necho older bytes\n" if expected == "stale" else data
    run = {"checker": "shellcheck", "host": None, "test": test, "sha256": _sha(checked),
           "outcome": "failed" if expected == "failed" else "passed", "date": "2026-11-20", "commit": "abc1234"}
    return {"checks": [{"checker": "shellcheck", "host": None, "test": test}], "runs": [run]}


def project(sphinx_root, *, ran: bool):
    records = {}
    for rel, expected in SNIPPETS.items():
        data = f"#!/usr/bin/env bash\necho {expected}\n".encode()
        sphinx_root.write(f"snippets/{rel}", data)
        records[rel] = _record(rel, expected, data)
    sphinx_root.ledger(records, ran=ran)
    body = "# Three snippets\n" + "".join(f"\n{FENCE}{{snippet}} {rel}\n{FENCE}\n" for rel in SNIPPETS)
    sphinx_root.add_page("three", body)
    return sphinx_root


@pytest.fixture
def root(sphinx_root):
    return project(sphinx_root, ran=True)


def page_badges(root) -> dict[str, tuple[list[str], str]]:
    """Per snippet shown on the built page, the outcome each badge's text names (and its class agrees), and the
    note after the badges (when and where it was last checked)."""
    build = root.build("html")
    assert build.returncode == 0, build.log
    found = {}
    for wrapper in build.html("three").select("div.zr-snippet-wrapper"):
        rel = wrapper.select_one(".caption-text, .caption").get_text(strip=True)
        line = wrapper.find_next_sibling("p", class_="zr-badges")
        outcomes = []
        for badge in line.select(".zr-badge"):
            checker, host, outcome = badge.get_text().split(" · ")[:3]
            assert "zr-" + outcome.replace(" ", "-") in badge["class"], badge
            outcomes.append(outcome)
        found[rel] = outcomes, line.select_one(".zr-checked-on").get_text()
    return found


def page_outcomes(root) -> dict[str, list[str]]:
    return {rel: outcomes for rel, (outcomes, _note) in page_badges(root).items()}


def manifest_outcomes(root) -> dict[str, list[str]]:
    rows = bundle.manifest(root.read_ledger(), root=root.path / "snippets")
    return {row["path"]: [c["last_result"] for c in row["checks"]] for row in rows}


def assert_agree(root, expected: dict[str, str] = SNIPPETS) -> None:
    on_page, in_manifest = page_outcomes(root), manifest_outcomes(root)
    expected = {rel: [outcome] for rel, outcome in expected.items()}
    assert on_page == expected, on_page
    assert in_manifest == expected, in_manifest


def test_the_page_and_the_manifest_agree_on_every_outcome(root):
    assert_agree(root)


def test_a_fresh_clone_shows_the_declared_checkers_not_run_in_this_build_never_passed(sphinx_root):
    root = project(sphinx_root, ran=False)
    assert_agree(root, {rel: "not run" for rel in SNIPPETS})
    notes = {note for _outcomes, note in page_badges(root).values()}
    assert notes == {"(not run in this build)"}


def test_after_a_run_the_page_says_when_it_was_checked(root):
    notes = {note for _outcomes, note in page_badges(root).values()}
    assert notes == {"(last checked 2026-11-20, commit abc1234)"}


def test_a_badge_rule_of_its_own_that_ignores_the_bytes_is_caught(root, monkeypatch):
    """The newest run's outcome, whatever bytes it checked: the stale file's badge would read 'passed'."""

    def newest_run_outcome(app, rel):
        runs = app.env.zr_ledger["snippets"][rel]["runs"]
        return ledger.entries(app.env.zr_ledger, rel, runs[-1]["sha256"])

    monkeypatch.setattr(badges, "badge_entries", newest_run_outcome)
    assert page_outcomes(root)["crypto/stale.sh"] == ["passed"]
    with pytest.raises(AssertionError):
        assert_agree(root)


def test_an_s390x_badge_says_why_the_test_runs_there(sphinx_root):
    """The s390x host runs only tests declared arch_dependent: its badge carries the reason (HTML title)."""
    data = b"#!/usr/bin/env bash\necho token\n"
    sphinx_root.write("snippets/crypto/token.sh", data)
    why = "the ICA token on s390x"
    checks = [{"checker": "shellcheck", "host": "debian13-s390x", "test": "checks/t.py::a[debian13-s390x]", "why": why},
              {"checker": "shellcheck", "host": "debian13-amd64", "test": "checks/t.py::a[debian13-amd64]"}]
    sphinx_root.ledger({"crypto/token.sh": {"checks": checks, "runs": []}}, ran=False)
    sphinx_root.add_page("one", f"# One\n\n{FENCE}{{snippet}} crypto/token.sh\n{FENCE}\n")
    build = sphinx_root.build("html")
    assert build.returncode == 0, build.log
    badges_ = build.html("one").select("p.zr-badges .zr-badge")
    titles = {b.get_text().split(" · ")[1]: b.get("title") for b in badges_}
    assert titles == {"debian13-amd64": None, "debian13-s390x": f"on debian13-s390x because {why}"}, titles
