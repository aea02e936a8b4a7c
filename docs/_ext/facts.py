"""Reference content generated from the data the checks use: nothing typed twice.

* ``{facts-table} facts/db2/ipc-minimums.csv`` renders a CSV file (header row first) as a table.
  Optional ``:columns: a, b`` picks and orders columns; ``:where: column=value`` filters rows;
  ``:rows: crypto.routes:with_route`` passes the rows through a function of ``zrunbook/<module>.py`` that adds
  computed columns (a route decided by another table), so the page never shows a typed copy of them.
  The path is relative to the project root and must lie under ``facts/`` or ``snippets/``.
  Long words in a cell (paths, test ids) get break points so they wrap instead of running off the PDF page.
  A table under ``facts/`` is read through zrunbook/facts.py and must match facts/schema.toml (a mismatch
  fails the build). Its source column (and a ``source`` column of a table under ``snippets/``) shows each
  reference for a reader: a document id as the document's short title from facts/documents.csv (linked
  when it has a URL), a URL as a link, a project file as its path; a hint in parentheses follows.
* ``{source}`ibm-was8-ssl-2013 (Configuring the IBMPKCS11Impl provider)``` cites a source in prose the way a
  facts table's source column shows it (a document id from facts/documents.csv, a URL or a project file,
  optionally with a hint); a source the rule rejects fails the build.
* ``{value}`db2:total_log_space_gb``` inserts a value computed at build time: the part before the
  colon names the module ``zrunbook/<part>/values.py``, the part after a function in it that takes no
  arguments and returns the text to show. A missing module, function or error fails the build.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

logger = logging.getLogger(__name__)
WIDE = 6  # columns from which a facts table is set in \scriptsize in the PDF
ALLOWED_ROOTS = ("facts/", "snippets/")


LONG_WORD = 10  # longer words (paths, test ids, value lists) get break points so they wrap inside a cell
BREAK_AFTER = re.compile(r"(?<=[/_:.|,=+-])(?=.)")
CHUNK = 8  # a run without separators (a hash, a long number) may still break every CHUNK characters


def breakable(word: str) -> list[nodes.Node]:
    """A long path or test id as text with break points (<wbr> in HTML, \\allowbreak in LaTeX)."""
    pieces = []
    for part in BREAK_AFTER.split(word):
        width = CHUNK if len(part) > LONG_WORD else len(part)  # only separator-free runs are cut
        pieces += [part[i:i + width] for i in range(0, len(part), width)]
    out: list[nodes.Node] = []
    for i, piece in enumerate(pieces):
        if i:
            out += [nodes.raw("", "<wbr>", format="html"), nodes.raw("", r"\allowbreak{}", format="latex")]
        out.append(nodes.Text(piece))
    return out


def source_cell(cell: str, para: nodes.paragraph) -> nodes.paragraph:
    """A source cell for a reader: document ids as short titles (linked when the document has a URL), URLs as
    links, project files as paths, each followed by its hint; anything the rule rejects stays as written."""
    from zrunbook import facts as facts_tables

    documents = facts_tables.documents()
    for i, ref in enumerate(facts_tables.references(cell)):
        if i:
            para += nodes.Text("; ")
        if isinstance(ref, str):  # not a valid reference: the checks fail on it; show the raw part
            para += nodes.Text(cell.split(facts_tables.SEPARATOR)[i].strip())
            continue
        if ref.kind == "document":
            doc = documents[ref.target]
            label = doc["short_title"]
            if doc["url"]:
                para += nodes.reference(label, label, refuri=doc["url"], reftitle=doc["title"])
            else:
                para += nodes.inline(label, label, classes=["zr-document"])
        elif ref.kind == "url":
            para += nodes.reference(ref.target, ref.target, refuri=ref.target)  # breakable in the PDF (xurl)
        else:
            para += nodes.literal(ref.target, "", *breakable(ref.target))
        if ref.hint:
            para += nodes.Text(f" ({ref.hint})")
    return para


class FactsTable(SphinxDirective):
    required_arguments = 1
    optional_arguments = 0
    has_content = False
    option_spec = {"columns": directives.unchanged, "where": directives.unchanged,
                   "caption": directives.unchanged, "rows": directives.unchanged}

    def run(self):
        rel = self.arguments[0]
        where = f"{self.env.doc2path(self.env.docname, False)}:{self.lineno}"
        root = Path(self.env.app.confdir)
        path = (root / rel).resolve()
        if not rel.startswith(ALLOWED_ROOTS) or root.resolve() not in path.parents or not path.is_file():
            return [self._error(f"{where}: facts table {rel!r} is not a file under facts/ or snippets/")]
        self.env.note_dependency(str(path))
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        from zrunbook import facts as facts_tables  # the one loader the checks use too
        source_column = "source"
        if rel.startswith("facts/"):
            self.env.note_dependency(str(facts_tables.SCHEMA))
            self.env.note_dependency(str(facts_tables.DOCUMENTS))
            try:
                rows = facts_tables.load(path)
                source_column = facts_tables.source_column(path)
            except (facts_tables.FactsError, KeyError) as exc:
                return [self._error(f"{where}: {exc}")]
        else:
            rows = [r for r in facts_tables.rows(path) if any(r.values())]
        if "rows" in self.options:
            module_name, _, func_name = self.options["rows"].partition(":")
            try:
                module = importlib.import_module(f"zrunbook.{module_name}")
                self.env.note_dependency(str(module.__file__))
                rows = getattr(module, func_name)(rows)
            except Exception as exc:  # a failure is a build error naming page and line
                return [self._error(f"{where}: rows {self.options['rows']!r} failed: {type(exc).__name__}: {exc}")]
        fields = list(rows[0].keys()) if rows else []
        self.env.note_dependency(str(facts_tables.DOCUMENTS))
        if "columns" in self.options:
            wanted = [c.strip() for c in self.options["columns"].split(",")]
            unknown = [c for c in wanted if c not in fields]
            if unknown:
                return [self._error(f"{where}: {rel} has no column(s) {unknown}; it has {fields}")]
            fields = wanted
        if "where" in self.options:
            key, _, value = self.options["where"].partition("=")
            rows = [r for r in rows if r.get(key.strip(), "").strip() == value.strip()]
        table = nodes.table(classes=["zr-facts"])
        if "caption" in self.options:
            table += nodes.title(self.options["caption"], self.options["caption"])
        group = nodes.tgroup(cols=len(fields))
        table += group
        table["classes"].append("colwidths-given")  # widths follow the content, also in the PDF
        for f in fields:
            longest_word = max([len(w) for r in rows for w in (r.get(f) or "").split()] + [len(f)])
            mean = sum(len(r.get(f) or "") for r in rows) / max(len(rows), 1)
            # never narrower than its longest word that cannot break (URLs and paths break: xurl), up to 16
            unbreakable = min(16, max([len(w) for r in rows for w in (r.get(f) or "").split()
                                       if "/" not in w] + [0]))
            natural = int(8 + 3 * max(longest_word, mean) ** 0.5)
            group += nodes.colspec(colwidth=max(int(1.5 * unbreakable + 4), natural))
        head = nodes.thead()
        group += head
        head += self._row(fields)
        body = nodes.tbody()
        group += body
        for r in rows:
            body += self._row([r.get(f, "") or "" for f in fields],
                              fields.index(source_column) if source_column in fields else None)
        source = nodes.paragraph("", "", classes=["zr-facts-source"])
        source += nodes.Text("Generated from ")
        source += nodes.literal(rel, rel)
        source += nodes.Text(", the file the checks read.")
        if len(fields) >= WIDE:  # the PDF sets wide tables a size smaller (conf.py's \zrtablesize)
            return [nodes.raw("", r"\renewcommand\zrtablesize{\scriptsize}", format="latex"), table,
                    nodes.raw("", r"\renewcommand\zrtablesize{\footnotesize}", format="latex"), source]
        return [table, source]

    def _row(self, cells, source_at=None):
        row = nodes.row()
        for at, cell in enumerate(cells):
            entry = nodes.entry()
            para = nodes.paragraph()
            if at == source_at and cell.strip():
                entry += source_cell(cell, para)
                row += entry
                continue
            for i, word in enumerate(cell.split(" ")):
                if i:
                    para += nodes.Text(" ")
                if word.startswith(("http://", "https://")):
                    para += nodes.reference(word, word, refuri=word)  # breakable in the PDF (xurl)
                elif len(word) > LONG_WORD:
                    para += breakable(word)
                else:
                    para += nodes.Text(word)
            entry += para
            row += entry
        return row

    def _error(self, message):
        logger.warning(message, type="facts")
        self.env.app.env.zr_problems.setdefault(self.env.docname, []).append(message)
        return nodes.paragraph(message, message)


class ComputedValue(SphinxRole):
    def run(self):
        where = f"{self.env.doc2path(self.env.docname, False)}:{self.lineno}"
        module_name, _, func_name = self.text.partition(":")
        root = Path(self.env.app.confdir)
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        try:
            module = importlib.import_module(f"zrunbook.{module_name}.values")
            mod_path = Path(module.__file__)
            self.env.note_dependency(str(mod_path))
            value = str(getattr(module, func_name)())
            for dep in getattr(module, "DEPENDS_ON", []):  # held to what the module reads: test_values_depend_on.py
                self.env.note_dependency(str(root / dep))
            self.env.note_dependency(str(root / "facts" / "schema.toml"))  # every table it reads is checked against it
        except Exception as exc:  # any failure is a build error naming page and line
            message = f"{where}: computed value {self.text!r} failed: {type(exc).__name__}: {exc}"
            logger.warning(message, type="facts")
            self.env.zr_problems.setdefault(self.env.docname, []).append(message)
            return [nodes.problematic(self.text, self.text)], []
        return [nodes.inline(value, value, classes=["zr-computed"])], []


class SourceRole(SphinxRole):
    """A source cited in prose, checked by the same rule as a facts table's source column."""

    def run(self):
        from zrunbook import facts as facts_tables

        problems = facts_tables.source_problems(self.text)
        if problems:
            where = f"{self.env.doc2path(self.env.docname, False)}:{self.lineno}"
            message = f"{where}: source {self.text!r}: {'; '.join(problems)}"
            logger.warning(message, type="facts")
            self.env.zr_problems.setdefault(self.env.docname, []).append(message)
            return [nodes.problematic(self.text, self.text)], []
        self.env.note_dependency(str(facts_tables.FACTS / "documents.csv"))
        para = source_cell(self.text, nodes.inline("", "", classes=["zr-source"]))
        return [para], []


def setup(app: Sphinx):
    app.add_directive("facts-table", FactsTable)
    app.add_role("source", SourceRole())
    app.add_role("value", ComputedValue())
    # env_version: bump when the doctrees this extension makes change, so existing builds re-read the pages
    # (2: cells no longer lose characters at their break points; 3: source cells show documents, links, paths).
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 3}
