"""A reader on a clean Debian or Ubuntu host has neither curl nor the openssl command: the pages install each before
the first step (or sentence) that uses it, in the order a reader walks the chapters (zrunbook.walkthrough).

Static: reads the pages and snippets only; the walkthrough tests show the same on a clean host, chapter by chapter.
"""

import re

import pytest

from zrunbook import ROOT, SNIPPETS
from zrunbook.walkthrough import DEBIAN_TABS, chapter, steps, walk_order

CHAPTERS = sorted(p.parent.name for p in (ROOT / "docs/how-to").glob("*/index.md")
                  if "{walked}" in p.read_text(encoding="utf-8"))
TOOLS = ("curl", "openssl", "ps")
PACKAGE = {"ps": "procps"}  # the package of a tool whose name differs (the walk's clean host has no procps)


def installs(text: str, tool: str) -> bool:
    """The snippet installs the package of that name with apt-get (on its line, or in a packages=(...) list)."""
    lines = [line for line in text.splitlines() if "apt-get install" in line or re.match(r"\s*packages\+?=\(", line)]
    return any(re.search(rf"(?<![\w-]){tool}(?![\w-])", line) for line in lines)


def uses(text: str, tool: str) -> bool:
    """The snippet runs the program: in a `for tool in ...` loop of required commands, or as a command."""
    return bool(re.search(rf"^\s*for tool in [^;]*\b{tool}\b", text, re.M)
                or re.search(rf"(^|[|;&(]\s*|\$\()\s*{tool}\s", text, re.M))


def first_use_before_install(name: str, tool: str) -> str | None:
    """Where the walk of the chapter first uses the tool before any step installed it, or None."""
    installed = False
    for part in walk_order(name):
        for page in chapter(part):
            text = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
            if tool == "openssl" and re.search(r"[Cc]heck with `openssl ", text) and not installed and \
                    not any(installs((SNIPPETS / s.snippet).read_text(), tool)
                            for s in steps(page, DEBIAN_TABS).steps if s.runs):
                return f"docs/{page}.md asks the reader to run openssl before a page installs it"
            for step in steps(page, DEBIAN_TABS).steps:
                if not step.runs:  # steps a container host passes over count too: a reader runs them
                    continue
                body = (SNIPPETS / step.snippet).read_text(encoding="utf-8")
                if installs(body, PACKAGE.get(tool, tool)):
                    installed = True
                elif uses(body, tool) and not installed:
                    return step.where()
    return None


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*.sh")
@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("name", CHAPTERS)
def test_each_chapter_installs_the_tool_before_its_first_use(name, tool):
    assert first_use_before_install(name, tool) is None


def test_the_rule_sees_an_install_and_a_use():
    assert installs("apt-get install -y --no-install-recommends opensc openssl curl\n", "curl")
    assert installs("packages=(opencryptoki openssl)\n", "openssl")
    assert not installs("apt-get install -y libcurl4\n", "curl")
    assert uses("for tool in curl pkcsstats; do\n", "curl")
    assert uses('out=$(curl -sS "$url")\n', "curl")
    assert not uses("# curl is not needed\n", "curl")
    assert uses('running() { grep -q x <<<"$(ps -o stat= -C apache2)"; }\n', "ps")
    assert installs("packages=(opencryptoki openssl procps)\n", PACKAGE["ps"])
