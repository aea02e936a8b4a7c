"""Tabs outside HTML (the PDF): each tab becomes a labelled block, 'Tab: Current · RHEL/SLES' then its content.

sphinx-tabs renders a tab for a non-HTML builder as container[container[container[paragraph]], container]: the
label nested in the first container, the panel in the second. Nested tabs carry their parents' labels.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx


def _tab_parts(node):
    """(label, panel) when ``node`` is sphinx-tabs' fallback for non-HTML builders, else None."""
    if type(node) is not nodes.container or len(node.children) != 2:
        return None
    tab, panel = node.children
    if type(tab) is not nodes.container or type(panel) is not nodes.container or len(tab.children) != 1:
        return None
    name = tab.children[0]
    if type(name) is not nodes.container or len(name.children) != 1:
        return None
    if not isinstance(name.children[0], nodes.paragraph):
        return None
    return name.children[0].astext(), panel


def tabs_as_labelled_sections(app: Sphinx, doctree: nodes.document) -> None:
    if app.builder.format == "html":
        return

    def walk(node, labels):
        for child in list(node.children):
            parts = _tab_parts(child)
            if parts is None:
                if isinstance(child, nodes.Element):
                    walk(child, labels)
                continue
            label, panel = parts
            full = labels + [label]
            walk(panel, full)
            heading = nodes.rubric("", "Tab: " + " \u00b7 ".join(full), classes=["zr-tab-label"])
            block = nodes.container("", heading, *panel.children, classes=["zr-tab"])
            child.replace_self(block)

    walk(doctree, [])


def setup(app: Sphinx):
    app.connect("doctree-read", tabs_as_labelled_sections)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
