"""The evidence vocabulary on the pages: one list of kinds, and claims a page makes about one file.

* ``{evidence-kinds}`` (a directive, no arguments) renders the kinds of ``zrunbook/checkers.toml``'s [evidence]
  tables in their order: each kind's badge words, what a pass of that kind proves (``means``), the words a badge
  shows when it names the library that ran, and the checkers of that kind. The front page's list is this
  directive, so it cannot drift from the badges.
* ``{evidence}`KIND <snippet path>``` is a page's claim that a file had evidence of KIND ("ran", "harness", ...):
  it renders the words that file's badge shows for that kind, and it is a build error (page and line) when no
  checker the declarations give for that file has that kind, or the kind or the file is unknown. So a page cannot
  say "ran" about a file whose badges say "project harness".
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from snippet import problem
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective, SphinxRole

from zrunbook import registry

CLAIM = re.compile(r"^\s*(?P<kind>[\w-]+)\s*<(?P<rel>[^<>]+)>\s*$")


def _problem(env, lineno: int, message: str) -> None:
    """A build error naming page and line (listed again when the build finishes: invariants.py)."""
    if not hasattr(env, "zr_problems"):
        env.zr_problems = {}
    problem(env, env.docname, f"{env.doc2path(env.docname, False)}:{lineno}: {message}")


def declared_checkers(env, rel: str) -> set[str]:
    """The checkers the declarations give for ``rel``."""
    return {c["checker"] for c in env.zr_ledger.get("snippets", {}).get(rel, {}).get("checks", [])}


class EvidenceClaim(SphinxRole):
    def run(self):
        env = self.env
        env.note_dependency(str(registry.REGISTRY))
        env.note_dependency(str(Path(env.zr_confdir) / self.config.snippet_declarations))
        m = CLAIM.match(self.text)
        if not m:
            _problem(env, self.lineno, f"{{evidence}} {self.text!r}: write KIND <snippet path>, e.g. "
                                       "harness <ihs/httpd/httpd-ssl-current.conf>")
            return [nodes.problematic(self.text, self.text)], []
        kind, rel = m["kind"], m["rel"].strip()
        checkers = declared_checkers(env, rel)
        if why := registry.claim_problem(kind, rel, checkers):
            _problem(env, self.lineno, f"{{evidence}} {why}")
            return [nodes.problematic(self.text, self.text)], []
        words = registry.evidence(registry.carried(checkers)[kind][0])
        return [nodes.inline(words, words, classes=["zr-evidence", f"zr-evidence-{kind}"])], []


class EvidenceKinds(SphinxDirective):
    has_content = False

    def run(self):
        self.env.note_dependency(str(registry.REGISTRY))
        checkers = registry.declared()
        items = nodes.bullet_list(classes=["zr-evidence-kinds"])
        for name, kind in registry.vocabulary().items():
            mine = sorted(c for c, e in checkers.items() if e["evidence"] == name)
            para = nodes.paragraph()
            para += nodes.strong(kind["badge"], kind["badge"], classes=["zr-evidence", f"zr-evidence-{name}"])
            para += nodes.Text(f": {kind['means']}." if kind["badge"] == name else f" ({name}): {kind['means']}.")
            named = sorted({registry.evidence(c) for c in mine if "program" in checkers[c]})
            if named:
                para += nodes.Text(" With the library named, the badge reads ")
                for i, words in enumerate(named):
                    if i:
                        para += nodes.Text(", ")
                    para += nodes.emphasis(words, words)
                para += nodes.Text(".")
            para += nodes.Text(f" Checkers: {', '.join(mine) if mine else 'none'}.")
            items += nodes.list_item("", para)
        return [items]


def setup(app: Sphinx):
    app.setup_extension("badges")  # the ledger (declarations) the claims are checked against
    app.add_role("evidence", EvidenceClaim())
    app.add_directive("evidence-kinds", EvidenceKinds)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
