"""pytest plugin (checks/conftest.py lists it): the ``sphinx_root`` fixture.

A small Sphinx project with the guide's snippet extensions, built in-process with ``sphinx.testing``.

A test writes a few pages, snippets, the declarations (which test checks which snippet) and, when it wants a
run to have happened, results into a tmp folder and builds it; no copy of the repository, no subprocess, and
never the repository's own results (build/results.json) or declarations. Pages sit at the root of the project
(confdir = srcdir), so a message names ``page.md:LINE``.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_escape_sequences

from zrunbook import ledger

REPO = Path(__file__).resolve().parents[1]
FENCE = "`" * 3  # written this way so no test file holds a fence of its own
EXTENSIONS = ["myst_parser", "sphinx_tabs.tabs", "sphinx_copybutton", "snippet", "badges", "invariants", "pdftabs"]
CONF = f"""import sys
sys.path[:0] = [{str(REPO / "docs" / "_ext")!r}, {str(REPO)!r}]
extensions = {EXTENSIONS!r}
exclude_patterns = ["_build", "snippets"]
myst_enable_extensions = ["colon_fence"]
snippet_root = "snippets"
snippet_declarations = "declarations.tsv"
snippet_results = "build/results.json"
"""


@dataclass
class Build:
    returncode: int
    log: str  # Sphinx's warnings and errors
    outdir: Path

    def html(self, page: str) -> BeautifulSoup:
        return BeautifulSoup((self.outdir / f"{page}.html").read_text(encoding="utf-8"), "html.parser")


class SphinxRoot:
    def __init__(self, path: Path):
        self.path = path
        self.write("conf.py", CONF)
        self.write("index.md", "# Test guide\n")

    def write(self, rel: str, text: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return target

    def add_page(self, name: str, body: str) -> str:
        """A page in the toctree; returns its path relative to the project, as messages name it."""
        self.write(f"{name}.md", body)
        index = self.path / "index.md"
        index.write_text(index.read_text(encoding="utf-8") + f"\n{FENCE}{{toctree}}\n:hidden:\n\n{name}\n{FENCE}\n",
                         encoding="utf-8")
        return f"{name}.md"

    def show(self, name: str, reference: str, *options: str) -> str:
        """A page whose line 3 shows one snippet, with directive options such as ':end-before: x'."""
        lines = "".join(f"{o}\n" for o in options)
        return self.add_page(name, f"# {name}\n\n{FENCE}{{snippet}} {reference}\n{lines}{FENCE}\n")

    def ledger(self, snippets: dict, *, ran: bool = True) -> None:
        """Per snippet its checks (written as the declarations) and runs (the results; none when not ``ran``)."""
        ledger.save_declarations({rel: r.get("checks", []) for rel, r in snippets.items()},
                                 self.path / "declarations.tsv")
        results = self.path / "build" / "results.json"
        if ran:
            ledger.save({"format": ledger.FORMAT, "snippets": snippets}, results)
        else:
            results.unlink(missing_ok=True)

    def read_ledger(self) -> dict:
        """What the project's badges read: its declarations and results."""
        return ledger.read(self.path / "build" / "results.json", self.path / "declarations.tsv")

    def build(self, builder: str = "dummy") -> Build:
        app = SphinxTestApp(builder, srcdir=self.path, freshenv=True, status=StringIO(), warning=StringIO())
        try:
            app.build()
            return Build(app.statuscode, strip_escape_sequences(app.warning.getvalue()), Path(app.outdir))
        finally:
            app.cleanup()


@pytest.fixture
def sphinx_root(tmp_path) -> SphinxRoot:
    return SphinxRoot(tmp_path / "guide")
