"""The PDF's parts: each captioned toctree of the root page (Explanation, How-to, Results, Reference) opens a
LaTeX ``\\part`` with its caption, so the PDF's contents group the chapters as the HTML sidebar does.

Sphinx's LaTeX builder drops toctree captions and names the table of contents after the first one, so without
this the PDF's contents were titled "Explanation" and listed every chapter in one flat run. In a LaTeX build
only (its own environment), the caption moves from the toctree to its wrapper; after the toctrees are inlined,
a ``\\part`` is put at the head of each wrapper. The HTML build is untouched.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.texescape import escape

PART = "zr_part"


def _is_latex(app: Sphinx) -> bool:
    return getattr(app.builder, "format", "") == "latex"


def captions_to_parts(app: Sphinx, doctree: nodes.document) -> None:
    if not _is_latex(app) or app.env.docname != app.config.root_doc:
        return
    for toctree in doctree.findall(addnodes.toctree):
        caption = toctree.attributes.pop("caption", None)
        if caption and isinstance(toctree.parent, nodes.compound):
            toctree.parent[PART] = caption


def insert_parts(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if not _is_latex(app) or docname != app.config.root_doc:
        return
    for wrapper in doctree.findall(nodes.compound):
        if wrapper.get(PART) and not wrapper.get("zr_part_done"):
            wrapper.insert(0, nodes.raw("", f"\\part{{{escape(wrapper[PART])}}}\n", format="latex"))
            wrapper["zr_part_done"] = True


def setup(app: Sphinx):
    app.connect("doctree-read", captions_to_parts)
    app.connect("doctree-resolved", insert_parts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
