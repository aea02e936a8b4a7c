"""The ``snippet`` directive: a file under ``snippets/`` shown on a page, and the state the other extensions read.

``{snippet} <path>`` renders ``snippets/<path>``: the path as caption, highlighting chosen from the file kind, a
copy button (sphinx-copybutton) and a placeholder for the badge line (badges.py fills it in: checkers, hosts, last
outcome, download link). ``:start-after: TEXT`` and ``:end-before: TEXT`` show only the lines between two marker
lines, as literalinclude does; the caption then says which lines, and the download is still the whole file. A
marker must be on exactly one line of the file.

The environment records which page shows which snippet (``env.zr_uses``, read by invariants.py for orphans and
by badges.py for the downloads), every snippet's sha256 (``env.zr_digests``) and the problems found
(``env.zr_problems``). Each problem is reported as ``page:line: message`` when it is found (a warning, so ``-W``
stops at the first) and again by invariants.py at ``build-finished``, which fails the build with or without ``-W``.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path, PurePosixPath

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from zrunbook.snippets import digests
from zrunbook.walkthrough import NEEDS, RUN_AS

logger = logging.getLogger(__name__)

# File kind -> Pygments lexer. Order matters: the first matching pattern wins.
KINDS: list[tuple[str, str]] = [
    ("*httpd*.conf", "apacheconf"),
    ("*apache*.conf", "apacheconf"),
    ("*.sh", "bash"),
    ("*.py", "python"),
    ("*.rules", "text"),
    ("*.sudoers", "text"),
    ("*.security", "properties"),
    ("*.properties", "properties"),
    ("db2dsdriver*.cfg", "xml"),
    ("*.cfg", "text"),
    ("*.conf", "ini"),
    ("*.cnf", "ini"),
    ("*.ini", "ini"),
    ("*.clp", "sql"),
    ("*.sql", "sql"),
    ("*.out", "text"),
    ("*.txt", "text"),
    ("*.csv", "text"),
    ("*.json", "json"),
    ("*.yaml", "yaml"),
    ("*.yml", "yaml"),
    ("*.toml", "toml"),
    ("*.java", "java"),
    ("*.c", "c"),
    ("*.service", "ini"),
    ("*.timer", "ini"),
    ("*.cron", "text"),
    ("*.xml", "xml"),
    ("jvm.options", "text"),
]
MARKERS = ("start-after", "end-before")
# ``:needs: ibm-z`` declares what a step needs that a host may lack (IBM Z hardware, s390x, an IBM product...: the
# table is zrunbook.walkthrough.NEEDS). ``:run: ARGS`` is what the reader types after a script; ``:save-as: PATH``
# where a configuration file goes; ``:as: token-admin`` who runs a script when it is not root. The caption says
# all four; a walkthrough follows them (zrunbook/walkthrough.py).


def lexer_for(path: str) -> str | None:
    name = PurePosixPath(path).name
    for pattern, lexer in KINDS:
        if fnmatch.fnmatch(name, pattern):
            return lexer
    return None


def state(app: Sphinx):
    env = app.env
    if not hasattr(env, "zr_uses"):
        env.zr_uses = {}  # docname -> {path: lineno}
    if not hasattr(env, "zr_problems"):
        env.zr_problems = {}  # docname -> [message]
    return env


def problem(env, docname: str, message: str, location=None) -> None:
    env.zr_problems.setdefault(docname, []).append(message)
    logger.warning(message, location=location, type="snippet")


def relpath(env, src: str | None) -> str:
    """src relative to the configuration directory, as messages name a page: docs/how-to/x.md."""
    if not src:
        return "?"
    try:
        return os.path.relpath(src, env.zr_confdir)
    except ValueError:
        return src


class RegionError(ValueError):
    pass


def region(text: str, rel: str, options: dict) -> tuple[str, int, int, int] | None:
    """(shown text, first line, last line, lines in the file) for the marker options, or None without them.

    The lines after the ``start-after`` line and before the ``end-before`` line, without blank lines at
    either end."""
    if not any(key in options for key in MARKERS):
        return None
    # Lines end at "\n" only: str.splitlines() also breaks at U+2028 and the like, which editors and wc do not.
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + [pieces[-1]] * bool(pieces[-1])
    found = {}
    for key in MARKERS:
        if key not in options:
            continue
        marker = options[key]
        hits = [i for i, line in enumerate(lines) if marker in line]
        if not hits:
            raise RegionError(f":{key}: marker {marker!r} is not in snippets/{rel}")
        if len(hits) > 1:
            raise RegionError(f":{key}: marker {marker!r} is on {len(hits)} lines of snippets/{rel} "
                              f"(lines {', '.join(str(i + 1) for i in hits)}): a marker must name one line")
        found[key] = hits[0]
    start = found.get("start-after", -1) + 1
    end = found.get("end-before", len(lines))
    while start < end and not lines[start].strip():  # blank lines at either end: shown, copied, counted for nothing
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if end <= start:
        raise RegionError(f"no lines between the markers in snippets/{rel} (:start-after: "
                          f"{options.get('start-after')!r}, :end-before: {options.get('end-before')!r})")
    return "".join(lines[start:end]), start + 1, end, len(lines)


def _absolute_path(value: str) -> str:
    value = directives.unchanged_required(value).strip()
    if not value.startswith("/") or len(value.split()) != 1 or ".." in value.split("/"):
        raise ValueError(f"{value!r} is not one absolute path")
    return value


class SnippetDirective(SphinxDirective):
    """``{snippet} crypto/packages/verify-packages.sh`` — exactly one path under snippets/."""

    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {**{key: directives.unchanged_required for key in MARKERS},
                   "needs": lambda value: directives.choice(value, tuple(NEEDS)),
                   "run": directives.unchanged_required,
                   "as": lambda value: directives.choice(value, tuple(RUN_AS)),
                   "save-as": _absolute_path}

    def run(self):
        env = self.env
        src, line = self.state_machine.get_source_and_line(self.lineno)
        where = f"{relpath(env, src)}:{line}"
        text = (self.arguments[0] if self.arguments else "").strip()
        if not text or len(text.split()) != 1 or any(s.strip() for s in self.content):
            return self._fail(f"{where}: malformed snippet reference {text!r}: "
                              "give exactly one path relative to snippets/")
        rel = text
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or rel.startswith("snippets/") or "\\" in rel:
            return self._fail(f"{where}: snippet path {rel!r} must be relative to snippets/ "
                              "and stay inside it (no leading 'snippets/', no '..', not absolute)")
        path = Path(env.zr_confdir) / self.config.snippet_root / rel
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
        try:
            part = region(text_content, rel, self.options)
        except RegionError as exc:
            return self._fail(f"{where}: {exc}")
        title = rel
        if part is not None:
            text_content, first, last, total = part
            title = f"{rel}, lines {first}\u2013{last} of {total}"
        if "needs" in self.options:
            title += f" \u00b7 {NEEDS[self.options['needs']]}"
        if "run" in self.options:
            if not rel.endswith(".sh"):
                return self._fail(f"{where}: :run: gives a script's arguments, and snippets/{rel} is no script")
            title += f" \u00b7 run: bash {PurePosixPath(rel).name} {self.options['run']}"
        if "as" in self.options:
            if not rel.endswith(".sh"):
                return self._fail(f"{where}: :as: names who runs a script, and snippets/{rel} is no script")
            title += f" \u00b7 {RUN_AS[self.options['as']][1]}"
        if "save-as" in self.options:
            title += f" \u00b7 save as {self.options['save-as']}"

        literal = nodes.literal_block(text_content, text_content)
        literal["language"] = lexer
        literal["zr_snippet"] = rel
        literal["classes"].append("zr-snippet")
        self.set_source_info(literal)
        caption = nodes.caption(title, "", nodes.Text(title))
        wrapper = nodes.container("", classes=["literal-block-wrapper", "zr-snippet-wrapper"],
                                  literal_block=True)
        wrapper += caption
        wrapper += literal
        badge = nodes.paragraph("", "", classes=["zr-badges"])
        badge["zr_badge_for"] = rel
        badge["zr_region"] = part is not None
        return [wrapper, badge]

    def _fail(self, message: str):
        problem(self.env, self.env.docname, message)
        return []


def on_builder_inited(app: Sphinx) -> None:
    env = state(app)
    env.zr_confdir = str(app.confdir)
    env.zr_digests = digests(Path(app.confdir) / app.config.snippet_root)


def on_env_purge_doc(app, env, docname):
    state(app)
    env.zr_uses.pop(docname, None)
    env.zr_problems.pop(docname, None)


def on_env_merge_info(app, env, docnames, other):
    state(app)
    for doc in docnames:
        if doc in getattr(other, "zr_uses", {}):
            env.zr_uses[doc] = other.zr_uses[doc]
        if doc in getattr(other, "zr_problems", {}):
            env.zr_problems[doc] = other.zr_problems[doc]


def setup(app: Sphinx):
    app.add_config_value("snippet_root", "snippets", "env")
    app.add_directive("snippet", SnippetDirective)
    app.connect("builder-inited", on_builder_inited)
    app.connect("env-purge-doc", on_env_purge_doc)
    app.connect("env-merge-info", on_env_merge_info)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 4}
