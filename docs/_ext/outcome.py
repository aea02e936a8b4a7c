"""``{outcome}``: the check of a chapter's purpose, its negative cases and their results (zrunbook/guide/outcomes.py).

Renders a box titled "Outcome check" with the page's sentence (what the check proves), the snippet a reader runs
and, per negative case, the test, what it expects (its ``@pytest.mark.negative``, zrunbook/negatives.py) and its
result on each host from this checkout's results. A declaration the committed declarations do not back (a negative
test that does not check the snippet) or that the test's mark does not (no mark for the snippet) is a build
problem, as is a how-to chapter without any outcome check (reported once, at the end of the build).
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from snippet import problem, state
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from zrunbook import SNIPPETS, negatives
from zrunbook.guide import outcomes


class OutcomeDirective(SphinxDirective):
    optional_arguments = 1
    has_content = True
    option_spec = {"negative": directives.unchanged, "not-run-here": directives.unchanged}

    def run(self):
        env = state(self.env.app)
        rel = self.arguments[0] if self.arguments else ""
        declared = outcomes.Outcome(self.env.docname, rel, tuple(self.options.get("negative", "").split()),
                                    self.options.get("not-run-here", "").strip())
        where = f"{self.env.doc2path(self.env.docname, False)}:{self.lineno}"
        marks = {t.test: t for t in negatives.negative_tests()}
        for message in [*outcomes.problems(declared, self.env.zr_ledger, SNIPPETS),
                        *outcomes.mark_problems(declared, {t: m.snippets for t, m in marks.items()})]:
            problem(env, self.env.docname, f"{where}: {message}")
        box = nodes.admonition(classes=["zr-outcome"])
        box += nodes.title("Outcome check", "Outcome check")
        self.state.nested_parse(self.content, self.content_offset, box)
        if rel:
            para = nodes.paragraph("", "Run ")
            para += nodes.literal(rel, rel)
            para += nodes.Text(". It fails when the purpose is not met; the checks run it against such a setup:")
            box += para
            cases = nodes.bullet_list()
            results = outcomes.negative_results(declared, self.env.zr_ledger, self.env.zr_digests.get(rel))
            for test, runs in results.items():
                item = nodes.list_item()
                line = nodes.paragraph()
                name = test.split("::")[-1]
                line += nodes.literal(name, name.replace("_", " ").removeprefix("test "))
                expects = marks[test].expects_for(rel) if test in marks else ""
                line += nodes.Text(f" ({test.split('::')[0]})" + (f", expecting that {expects}: " if expects else ": "))
                if all(outcome == "passed" for _host, outcome in runs):
                    line += nodes.Text("the check failed there, as it must (test passed on "
                                       + ", ".join(host for host, _outcome in runs) + ")")
                else:
                    line += nodes.Text("test " + ", ".join(f"{outcome} on {host}" for host, outcome in runs))
                item += line
                cases += item
            box += cases
        else:
            para = nodes.paragraph("", "Not run on the check hosts: " + declared.not_run_here)
            box += para
        return [box]


def on_build_finished(app: Sphinx, exception) -> None:
    if exception is not None:
        return
    missing = outcomes.missing_chapters(Path(app.srcdir))
    if missing:
        raise RuntimeError(f"how-to chapters without an outcome check ({{outcome}} directive): {missing}")


def setup(app: Sphinx):
    app.add_directive("outcome", OutcomeDirective)
    app.connect("build-finished", on_build_finished, priority=400)
    return {"version": "1", "parallel_read_safe": True, "env_version": 1}
