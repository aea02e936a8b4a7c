"""The build-time invariants of the guide.

* Invariant 1: every file under ``snippets/`` is shown by some page (a region include counts); a page naming a
  missing snippet is an error (snippet.py reports that one where it finds it).
* Invariant 3: no literal block in a page unless the ``snippet`` directive made it, and no directive shown as
  text because its colon fence was too short.

Every problem found while reading (snippet.py's and these) is listed again at ``build-finished``, which makes
the build exit non-zero with or without ``-W``.
"""

from __future__ import annotations

import re

from docutils import nodes
from snippet import problem, relpath, state
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

UNPARSED_DIRECTIVE = re.compile(r"^:{2,}\s*\{[\w-]+\}")


def _where(app: Sphinx, node: nodes.Node) -> str:
    return relpath(app.env, node.source) if node.source else app.env.doc2path(app.env.docname, False)


def on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    """Invariant 3: a literal block that no snippet directive made is inline copyable content."""
    env = state(app)
    for node in doctree.findall(nodes.literal_block):
        if node.get("zr_snippet"):
            continue
        if node.parent is not None and "graphviz" in type(node.parent).__name__:
            continue
        first = node.astext().splitlines()[0] if node.astext() else ""
        problem(env, env.docname,
                f"{_where(app, node)}:{node.line or '?'}: inline code block ({first[:40]!r}...): move it to a "
                "file under snippets/ and show it with the snippet directive")
    for para in doctree.findall(nodes.paragraph):
        text = para.astext()
        if UNPARSED_DIRECTIVE.match(text):
            problem(env, env.docname,
                    f"{_where(app, para)}:{para.line or '?'}: directive shown as text ({text[:30]!r}): a colon "
                    "fence needs at least three colons, and more than the fence it sits in")


def on_build_finished(app: Sphinx, exception) -> None:
    """Every problem again, and invariant 1's orphans: a failed build, with or without -W."""
    if exception is not None:
        return
    env = state(app)
    problems = [m for doc in sorted(env.zr_problems) for m in env.zr_problems[doc]]
    used = {rel for uses in env.zr_uses.values() for rel in uses}
    for rel in sorted(set(env.zr_digests) - used):
        problems.append(f"snippets/{rel}: orphan snippet: no page shows it "
                        "(add a snippet directive to a page under docs/, or delete the file)")
    if problems:
        logger.error("snippet invariants violated (%d):\n  %s", len(problems), "\n  ".join(problems))
        app.statuscode = 1


def setup(app: Sphinx):
    app.setup_extension("snippet")
    app.connect("doctree-read", on_doctree_read)
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
