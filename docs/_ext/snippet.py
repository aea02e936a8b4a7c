"""The ``snippet`` directive and the build-time invariants of zrunbook.

What it adds:

* ``{snippet} <path>`` renders ``snippets/<path>``: the path as caption, highlighting chosen from the
  file kind, a copy button (sphinx-copybutton), a download link to the byte-identical file (HTML) and
  a badge line naming the checkers and hosts that validate it, with their last outcome.
* Invariant 1: every file under ``snippets/`` is shown by some page; a page naming a missing snippet
  is an error.
* Invariant 3: no literal block in a page unless the ``snippet`` directive made it.

Every problem is reported as ``page:line: message`` when it is found (a warning, so ``-W`` stops at
the first) and again at ``build-finished``, which makes the build exit non-zero with or without ``-W``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import posixpath
import re
import shutil
from pathlib import Path, PurePosixPath

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

from zrunbook import ledger
from zrunbook.snippets import digests

logger = logging.getLogger(__name__)

# File kind -> Pygments lexer. Order matters: the first matching pattern wins.
KINDS: list[tuple[str, str]] = [
    ("*httpd*.conf", "apacheconf"),
    ("*apache*.conf", "apacheconf"),
    ("*.sh", "bash"),
    ("*.py", "python"),
    ("*.rules", "text"),
    ("*.security", "properties"),
    ("*.properties", "properties"),
    ("*.cfg", "text"),
    ("*.conf", "ini"),
    ("*.ini", "ini"),
    ("*.clp", "sql"),
    ("*.sql", "sql"),
    ("*.out", "text"),
    ("*.txt", "text"),
    ("*.csv", "text"),
    ("*.json", "json"),
    ("*.yaml", "yaml"),
    ("*.java", "java"),
    ("*.c", "c"),
    ("*.service", "ini"),
]

STATIC = "static"
UNPARSED_DIRECTIVE = re.compile(r"^:{2,}\s*\{[\w-]+\}")


def lexer_for(path: str) -> str | None:
    name = PurePosixPath(path).name
    for pattern, lexer in KINDS:
        if fnmatch.fnmatch(name, pattern):
            return lexer
    return None


def _state(app: Sphinx):
    env = app.env
    if not hasattr(env, "zr_uses"):
        env.zr_uses = {}  # docname -> {path: lineno}
    if not hasattr(env, "zr_problems"):
        env.zr_problems = {}  # docname -> [message]
    return env


def _problem(env, docname: str, message: str, location=None) -> None:
    env.zr_problems.setdefault(docname, []).append(message)
    logger.warning(message, location=location, type="snippet")


class SnippetDirective(SphinxDirective):
    """``{snippet} crypto/packages/verify-packages.sh`` — exactly one path under snippets/."""

    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: dict = {}

    def run(self):
        env = self.state.document.settings.env
        app = env.app
        _state(app)
        src, line = self.state_machine.get_source_and_line(self.lineno)
        where = f"{_rel(app, src)}:{line}"
        text = (self.arguments[0] if self.arguments else "").strip()
        if not text or len(text.split()) != 1 or any(s.strip() for s in self.content):
            return self._fail(f"{where}: malformed snippet reference {text!r}: "
                              "give exactly one path relative to snippets/")
        rel = text
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or rel.startswith("snippets/") or "\\" in rel:
            return self._fail(f"{where}: snippet path {rel!r} must be relative to snippets/ "
                              "and stay inside it (no leading 'snippets/', no '..', not absolute)")
        root = Path(app.confdir) / app.config.snippet_root
        path = root / rel
        env.zr_uses.setdefault(env.docname, {})[rel] = line
        if not path.is_file():
            return self._fail(f"{where}: page names a missing snippet: snippets/{rel}")
        lexer = lexer_for(rel)
        if lexer is None:
            return self._fail(f"{where}: unknown file kind for snippets/{rel}; "
                              "add its pattern to KINDS in docs/_ext/snippet.py")
        data = path.read_bytes()
        try:
            text_content = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._fail(f"{where}: snippets/{rel} is not UTF-8 ({exc.reason} at byte {exc.start})")
        bad = [i for i, ch in enumerate(text_content) if ord(ch) < 32 and ch not in "\t\n"]
        if bad:
            line_no = text_content.count("\n", 0, bad[0]) + 1
            return self._fail(f"{where}: snippets/{rel} line {line_no} holds control character "
                              f"{text_content[bad[0]]!r}: a reader cannot copy it; store what a terminal shows")
        env.note_dependency(str(path))

        literal = nodes.literal_block(text_content, text_content)
        literal["language"] = lexer
        literal["zr_snippet"] = rel
        literal["classes"].append("zr-snippet")
        self.set_source_info(literal)
        caption = nodes.caption(rel, "", nodes.Text(rel))
        wrapper = nodes.container("", classes=["literal-block-wrapper", "zr-snippet-wrapper"],
                                  literal_block=True)
        wrapper += caption
        wrapper += literal
        badge = nodes.paragraph("", "", classes=["zr-badges"])
        badge["zr_badge_for"] = rel
        return [wrapper, badge]

    def _fail(self, message: str):
        env = self.state.document.settings.env
        _problem(env, env.docname, message)
        return []


def _rel(app: Sphinx, src: str | None) -> str:
    if not src:
        return "?"
    try:
        return os.path.relpath(src, app.confdir)
    except ValueError:
        return src


# --- badges from the ledger -------------------------------------------------------------------

def _badge_entries(app: Sphinx, rel: str) -> list[dict]:
    """Per (checker, host) that checks rel: its outcome by zrunbook.ledger.outcome (the bundle asks too)."""
    return ledger.entries(app.env.zr_ledger, rel, app.env.zr_digests.get(rel))


def _badge_text(entry: dict) -> str:
    text = f"{entry['checker']} · {entry['host']} · {entry['outcome']}"
    return text + " · index unverified" if entry.get("index_unverified") else text


# --- events -----------------------------------------------------------------------------------

def on_builder_inited(app: Sphinx) -> None:
    env = _state(app)
    conf = Path(app.confdir)
    root = conf / app.config.snippet_root
    path = conf / app.config.snippet_ledger
    env.zr_ledger = ledger.load(path)
    env.zr_digests = digests(root)


def on_env_get_outdated(app, env, added, changed, removed):
    """Badges depend on coverage and results: re-read pages whose badges would change."""
    stamp = hashlib.sha256(json.dumps([env.zr_ledger, env.zr_digests],
                                      sort_keys=True).encode()).hexdigest()
    previous = getattr(env, "zr_badge_stamp", None)
    env.zr_badge_stamp = stamp
    if previous is None or previous == stamp:
        return []
    return [doc for doc, uses in env.zr_uses.items() if uses and doc in env.all_docs]


def on_env_purge_doc(app, env, docname):
    _state(app)
    env.zr_uses.pop(docname, None)
    env.zr_problems.pop(docname, None)


def on_env_merge_info(app, env, docnames, other):
    _state(app)
    for doc in docnames:
        if doc in getattr(other, "zr_uses", {}):
            env.zr_uses[doc] = other.zr_uses[doc]
        if doc in getattr(other, "zr_problems", {}):
            env.zr_problems[doc] = other.zr_problems[doc]


def on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    """Invariant 3: a literal block that no snippet directive made is inline copyable content."""
    env = _state(app)
    for node in doctree.findall(nodes.literal_block):
        if node.get("zr_snippet"):
            continue
        if node.parent is not None and "graphviz" in type(node.parent).__name__:
            continue
        src, line = node.source, node.line
        where = f"{_rel(app, src) if src else env.doc2path(env.docname, False)}:{line or '?'}"
        first = node.astext().splitlines()[0] if node.astext() else ""
        _problem(env, env.docname,
                 f"{where}: inline code block ({first[:40]!r}...): move it to a file under "
                 "snippets/ and show it with the snippet directive")
    for para in doctree.findall(nodes.paragraph):
        text = para.astext()
        if UNPARSED_DIRECTIVE.match(text):
            where = f"{_rel(app, para.source) if para.source else env.doc2path(env.docname, False)}"
            _problem(env, env.docname,
                     f"{where}:{para.line or '?'}: directive shown as text ({text[:30]!r}): a colon fence "
                     "needs at least three colons, and more than the fence it sits in")


def _tab_parts(node):
    """(label, panel) when ``node`` is sphinx-tabs' fallback for non-HTML builders, else None.

    sphinx-tabs renders a tab outside HTML as container[container[container[paragraph]], container].
    """
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
    """Outside HTML (the PDF) a tab becomes a labelled block: 'Current · RHEL/SLES' then its content."""
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


def on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    html = app.builder.format == "html"
    for badge in list(doctree.findall(nodes.paragraph)):
        rel = badge.get("zr_badge_for")
        if not rel:
            continue
        entries = _badge_entries(app, rel)
        new = nodes.paragraph("", "", classes=["zr-badges"])
        new += nodes.strong("Checked:", "Checked:")
        new += nodes.Text(" ")
        if not entries:
            new += nodes.inline("", "no checker", classes=["zr-badge", "zr-failed"])
        for i, entry in enumerate(entries):
            if i:
                new += nodes.Text("; ")
            classes = ["zr-badge", "zr-" + entry["outcome"].replace(" ", "-")]
            if entry.get("index_unverified"):
                classes.append("zr-index-unverified")  # dashed amber border; the text says it too
            new += nodes.inline("", _badge_text(entry), classes=classes)
        when = ledger.checked_on(entries)
        if when:
            new += nodes.Text(" ")
            new += nodes.inline("", f"(last checked {when[0]}, commit {when[1]})", classes=["zr-checked-on"])
        if html:
            new += nodes.Text("  ")
            target = relative_uri(app.builder.get_target_uri(docname), "_snippets/" + rel)
            new += nodes.reference("", "download", refuri=target, classes=["zr-download"],
                                   download=posixpath.basename(rel))
        badge.replace_self(new)


def on_build_finished(app: Sphinx, exception) -> None:
    if exception is not None:
        return
    env = app.env
    conf = Path(app.confdir)
    root = conf / app.config.snippet_root
    problems = [m for doc in sorted(env.zr_problems) for m in env.zr_problems[doc]]
    used = {rel for uses in env.zr_uses.values() for rel in uses}
    orphans = sorted(set(env.zr_digests) - used)
    for rel in orphans:
        problems.append(f"snippets/{rel}: orphan snippet: no page shows it "
                        "(add a snippet directive to a page under docs/, or delete the file)")
    if problems:
        logger.error("snippet invariants violated (%d):\n  %s", len(problems), "\n  ".join(problems))
        app.statuscode = 1
        return
    if app.builder.format == "html":
        out = Path(app.outdir) / "_snippets"
        if out.exists():
            shutil.rmtree(out)
        for rel in sorted(used):
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, dest)


def setup(app: Sphinx):
    app.add_config_value("snippet_root", "snippets", "env")
    app.add_config_value("snippet_ledger", "ledger.json", "env")
    app.add_directive("snippet", SnippetDirective)
    app.connect("builder-inited", on_builder_inited)
    app.connect("env-get-outdated", on_env_get_outdated)
    app.connect("env-purge-doc", on_env_purge_doc)
    app.connect("env-merge-info", on_env_merge_info)
    app.connect("doctree-read", on_doctree_read)
    app.connect("doctree-read", tabs_as_labelled_sections)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("build-finished", on_build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 3}
