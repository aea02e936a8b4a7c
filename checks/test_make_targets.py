"""README, `make help`, the Makefile, conf.py and the maintainers' page agree with the tree.

* Every target `make help` lists is described in the README, and every `make TARGET` the README or a page names is
  a target `make help` lists (the internal bench-* recipes behind `make bench WHAT=...` have no `##` and are named
  nowhere).
* The README's "Targets" list is the Makefile's `##` lines, word for word and in order.
* Every module in docs/_ext is loaded by conf.py and named in the maintainers' page (docs/reference/maintainers.md).
* The Makefile's BENCHES, the bench target's `##` text and the maintainers' page's "Measuring" list name the same
  kinds, and .PHONY names every target the Makefile defines.
"""

from __future__ import annotations

import ast
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


# --- the README's target list, the extensions and the bench kinds, each against what the tree says ------------

TARGET_LINE = re.compile(r"^- `make ([a-z][a-z-]*)`: (.*)$", re.M)
HELP_TEXT = re.compile(r"^([a-z][a-z-]*):[^\n]*?## (.*)$", re.M)
MAINTAINERS = ROOT / "docs/reference/maintainers.md"


def target_list_problems(makefile: str, readme: str) -> list[str]:
    """The README's "Targets" list is the Makefile's `##` lines, in order and word for word."""
    section = readme.split("\n## Targets", 1)[-1].split("\n## ", 1)[0]
    listed, helped = TARGET_LINE.findall(section), HELP_TEXT.findall(makefile)
    if listed == helped:
        return []
    out = [f"README lists `make {n}`: {t}; make help says otherwise or not at all" for n, t in listed
           if (n, t) not in helped]
    out += [f"make help lists `make {n}`: {t}; the README's Targets list does not" for n, t in helped
            if (n, t) not in listed]
    return out or ["the README's Targets list is not in make help's order"]


def test_readme_target_list_is_make_help():
    assert target_list_problems((ROOT / "Makefile").read_text(encoding="utf-8"),
                                (ROOT / "README.md").read_text(encoding="utf-8")) == []


def test_the_target_list_check_finds_a_changed_and_a_missing_target():
    makefile = "help: ## list the targets\ncheck: ## run every check\n"
    assert target_list_problems(makefile, "## Targets\n\n- `make help`: list the targets\n"
                                          "- `make check`: run every check\n") == []
    assert target_list_problems(makefile, "## Targets\n\n- `make help`: list them\n") == [
        "README lists `make help`: list them; make help says otherwise or not at all",
        "make help lists `make help`: list the targets; the README's Targets list does not",
        "make help lists `make check`: run every check; the README's Targets list does not"]


def extension_problems(conf: str, files: set[str], page: str) -> list[str]:
    """Every module in docs/_ext is loaded by conf.py and named, with what it does, in the maintainers' page's
    ``docs/_ext/`` item, and that item names no other."""
    loaded = set(ast.literal_eval(re.search(r"^extensions = (\[.*?\])", conf, re.M | re.S).group(1))) & files
    bullet = next((b for b in ("\n" + page).split("\n- ") if b.startswith("`docs/_ext/`")), "")
    named = set(re.findall(r"`(\w+)\.py`\s+\(", bullet))  # each extension with what it does: `snippet.py` (...)
    out = [f"docs/_ext/{f}.py: conf.py does not load it" for f in sorted(files - loaded)]
    out += [f"docs/_ext/{f}.py: the maintainers' page does not name it" for f in sorted(files - named)]
    out += [f"the maintainers' page names {f}.py, which docs/_ext does not hold" for f in sorted(named - files)]
    return out


def test_the_extension_lists_agree_with_docs_ext():
    files = {p.stem for p in (ROOT / "docs/_ext").glob("*.py")}
    assert extension_problems((ROOT / "conf.py").read_text(encoding="utf-8"), files,
                              MAINTAINERS.read_text(encoding="utf-8")) == []


def test_the_extension_check_finds_one_unloaded_one_unnamed_and_one_gone():
    conf = 'extensions = [\n    "myst_parser",\n    "snippet",\n    "gone",\n]\n'
    page = "- `docs/_ext/`: the extensions: `snippet.py` (the directive), `gone.py` (none).\n- `snippets/`: files\n"
    assert extension_problems(conf, {"snippet", "badges"}, page) == [
        "docs/_ext/badges.py: conf.py does not load it",
        "docs/_ext/badges.py: the maintainers' page does not name it",
        "the maintainers' page names gone.py, which docs/_ext does not hold"]


def bench_problems(makefile: str, page: str) -> list[str]:
    """BENCHES, the bench target's `##` text and the maintainers' page's WHAT= list name the same kinds, in order."""
    benches = re.search(r"^BENCHES := (.*)$", makefile, re.M).group(1).split()
    helped = re.search(r"^bench:.*## .*?WHAT=([a-z|-]+)", makefile, re.M).group(1).split("|")
    measuring = page.split("\n## Measuring", 1)[-1].split("\n## ", 1)[0]
    listed = re.findall(r"^- `WHAT=([a-z-]+)`", measuring, re.M)
    return [f"{where} names {got}, BENCHES {benches}" for where, got in
            (("make help's bench line", helped), ("the maintainers' page", listed)) if got != benches]


def test_the_bench_kinds_agree():
    assert bench_problems((ROOT / "Makefile").read_text(encoding="utf-8"), MAINTAINERS.read_text(encoding="utf-8")) \
        == []


def test_the_bench_check_finds_a_kind_left_out():
    makefile = "BENCHES := tls walk\nbench: ## measure: WHAT=tls|walk\n"
    assert bench_problems(makefile, "## Measuring\n\n- `WHAT=tls`: TLS\n") == [
        "the maintainers' page names ['tls'], BENCHES ['tls', 'walk']"]


def phony_problems(makefile: str) -> list[str]:
    """.PHONY names every target the Makefile defines and no other; each bench kind has its bench-KIND recipe."""
    benches = re.search(r"^BENCHES := (.*)$", makefile, re.M).group(1).split()
    phony = re.search(r"^\.PHONY: (.*)$", makefile, re.M).group(1)
    phony = set(phony.replace("$(addprefix bench-,$(BENCHES))", " ".join(f"bench-{b}" for b in benches)).split())
    defined = set(re.findall(r"^([a-z][a-z-]*):(?!=)", makefile, re.M))
    out = [f"{t}: a target .PHONY leaves out" for t in sorted(defined - phony)]
    out += [f"{t}: in .PHONY, but the Makefile defines no such target" for t in sorted(phony - defined)]
    out += [f"bench-{b}: BENCHES names it, but it has no recipe" for b in benches if f"bench-{b}" not in defined]
    return out


def test_phony_names_every_target():
    assert phony_problems((ROOT / "Makefile").read_text(encoding="utf-8")) == []


def test_the_phony_check_finds_a_target_left_out_and_one_gone():
    makefile = ("BENCHES := tls walk\n.PHONY: help gone $(addprefix bench-,$(BENCHES))\nhelp: ## list\n"
                "check: ## run\nbench-tls:\n")
    assert phony_problems(makefile) == ["check: a target .PHONY leaves out",
                                        "bench-walk: in .PHONY, but the Makefile defines no such target",
                                        "gone: in .PHONY, but the Makefile defines no such target",
                                        "bench-walk: BENCHES names it, but it has no recipe"]
