"""Accessibility fixes at the source of the HTML (WCAG 2.1 A/AA rules of axe-core; checks/site/test_accessibility.py).

* Sphinx renders each toctree caption (the sidebar's "How-to", "Reference"...) as ``<p role="heading">``
  without the ``aria-level`` that role requires: level 2 is added.
* A code block that scrolls sideways must be reachable by keyboard: every highlighted ``<pre>`` gets
  ``tabindex="0"`` (a keyboard user can then scroll it with the arrow keys).
* sphinx.ext.graphviz embeds an SVG diagram as ``<object>`` whose text alternative sits inside it, where
  assistive technology does not read it: the object gets ``role="img"`` and an ``aria-label`` with the
  diagram's ``:alt:`` text (or its caption), and the page keeps the text inside as well.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.ext import graphviz
from sphinx.writers.html5 import HTML5Translator

CAPTION = '<p class="caption" role="heading"'


class AccessibleTranslator(HTML5Translator):
    def visit_title(self, node):
        super().visit_title(node)
        for i in range(len(self.body) - 1, max(len(self.body) - 3, -1), -1):
            if self.body[i].startswith(CAPTION) and "aria-level" not in self.body[i]:
                self.body[i] = self.body[i].replace(CAPTION, CAPTION + ' aria-level="2"', 1)

    def visit_literal_block(self, node):
        try:
            super().visit_literal_block(node)
        except nodes.SkipNode:
            self.body[-1] = re.sub(r"<pre(?=[ >])", '<pre tabindex="0"', self.body[-1], count=1)
            raise


def visit_graphviz(self, node):
    start = len(self.body)
    try:
        graphviz.html_visit_graphviz(self, node)
    finally:
        label = node.get("alt") or _caption(node) or "diagram"
        for i in range(start, len(self.body)):
            if self.body[i].startswith("<object "):
                self.body[i] = self.body[i].replace(
                    "<object ", f'<object role="img" aria-label="{html.escape(label, quote=True)}" ', 1)


def _caption(node) -> str:
    parent = node.parent
    if parent is not None:
        for child in parent.children:
            if isinstance(child, nodes.caption):
                return child.astext()
    return ""


def setup(app):
    app.set_translator("html", AccessibleTranslator, override=True)
    app.add_node(graphviz.graphviz, override=True, html=(visit_graphviz, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
