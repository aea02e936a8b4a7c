"""``{where-index}``: the reference page "Where each snippet is checked", one entry per file under snippets/.

Each entry (its target ``where-<path>``, which every snippet's badge line links to) says what
``python -m zrunbook where PATH`` says (zrunbook/where.py): the pages that show the file, the checkers that cover it
on which hosts with how many tests, its negative cases, the facts tables its checkers and tests name, and the
prepared states whose key covers it. The list of tests itself is left to the command.
"""

from __future__ import annotations

from collections import Counter

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx import addnodes
from sphinx.application import Sphinx

from zrunbook import where as w
from zrunbook.snippets import all_snippets


def target_id(rel: str) -> str:
    return "where-" + nodes.make_id(rel)


def _item(label: str, parts: list[nodes.Node]) -> nodes.list_item:
    para = nodes.paragraph()
    para += nodes.strong(label, label)
    para += nodes.Text(" ")
    for i, part in enumerate(parts or [nodes.Text("none")]):
        if i:
            para += nodes.Text("; ")
        para += part
    item = nodes.list_item()
    item += para
    return item


def _page_link(docname: str, line: int, kind: str) -> nodes.Node:
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{docname}", refexplicit=False)
    ref += nodes.inline(docname, docname)  # replaced by the page's title
    holder = nodes.inline()
    holder += ref
    holder += nodes.Text(f" (line {line}, {kind})")
    return holder


class WhereIndex(Directive):
    has_content = False

    def run(self):
        env = self.state.document.settings.env
        env.note_dependency(w.__file__)
        if env.app.builder.format != "html":  # a long index of paths and test names: the HTML guide and the command
            text = ("The index is in the HTML guide (reference/where.html); here, run python -m zrunbook where PATH "
                    "for one snippet.")
            return [nodes.paragraph(text, text)]
        out = []
        for rel in all_snippets():
            found = w.where(rel)
            section = nodes.container(ids=[target_id(rel)], classes=["zr-where"])
            title = nodes.paragraph()
            title += nodes.literal(f"snippets/{rel}", f"snippets/{rel}")
            section += title
            items = nodes.bullet_list()
            items += _item("Shown on:", [_page_link(*p) for p in found.pages])
            counts = Counter((c["checker"], c["evidence"], c["host"]) for c in found.checks)
            items += _item("Checked by:", [nodes.Text(f"{checker} ({evidence}) on {host}: {n} test{'s' * (n > 1)}")
                                          for (checker, evidence, host), n in sorted(counts.items())])
            # The s390x host (under qemu) runs only the tests whose outcome can differ there: say why each does.
            whys = sorted({c["why"] for c in found.checks if c.get("why")})
            if any(c["host"] != "static" for c in found.checks):
                items += _item("On s390x:", [nodes.Text(f"because {why}") for why in whys]
                               or [nodes.Text("not run there: none of its host tests is declared "
                                              "architecture-dependent (ZR_EVERY_HOST=1 runs it there too)")])
            items += _item("Negative cases:", [nodes.Text(n) for n in found.negatives])
            items += _item("Facts tables:", [nodes.literal(f, f) for f in found.facts])
            items += _item("Prepared states:", [nodes.Text(f"{s.name} ({s.defined_in})") for s in found.states])
            section += items
            out.append(section)
        return out


def setup(app: Sphinx):
    app.add_directive("where-index", WhereIndex)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
