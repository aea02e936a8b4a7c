"""README, `make help` and the Makefile agree: every target `make help` lists is described in the README, and every
`make TARGET` the README or a page names is a target `make help` lists (the internal bench-* recipes behind
`make bench WHAT=...` have no `##` and are named nowhere)."""

from __future__ import annotations

import re
import subprocess

from zrunbook import ROOT

HELP = re.compile(r"^([a-z][a-z-]*):[^\n]*?## ", re.M)
NAMED = re.compile(r"`make ([a-z][a-z-]*)")


def problems(makefile: str, readme: str, pages: dict[str, str]) -> list[str]:
    listed = set(HELP.findall(makefile))
    out = [f"README: `make {t}` is a target (make help lists it) the README does not describe"
           for t in sorted(listed - set(NAMED.findall(readme)))]
    for where, text in {"README.md": readme, **pages}.items():
        unknown = sorted(set(NAMED.findall(text)) - listed)
        out += [f"{where}: names `make {t}`, which make help does not list" for t in unknown]
    return out


def test_readme_pages_and_makefile_agree():
    pages = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md")}
    assert problems((ROOT / "Makefile").read_text(encoding="utf-8"), (ROOT / "README.md").read_text(encoding="utf-8"),
                    pages) == []


def test_the_agreement_check_finds_a_target_missing_either_way():
    makefile = "check: ## run\nbench: ## measure\nbench-tls:\n"
    assert problems(makefile, "`make check`, `make bench WHAT=tls`", {}) == []
    assert problems(makefile, "`make check`", {"docs/x.md": "`make bench-tls`"}) == [
        "README: `make bench` is a target (make help lists it) the README does not describe",
        "docs/x.md: names `make bench-tls`, which make help does not list"]


def test_make_help_lists_exactly_the_documented_targets():
    shown = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout
    assert {line.split()[0] for line in shown.splitlines() if line.strip()} == \
        set(HELP.findall((ROOT / "Makefile").read_text(encoding="utf-8")))
