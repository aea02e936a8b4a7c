"""Every repository path that a docstring, a comment, the README or a page names exists (issue 43, item 5).

A path is named when it starts with one of the project's top-level folders (read from the tree: every folder at the
top that is not .git and that .gitignore does not leave out, so a new folder is covered without a list here),
followed by a slash. Where it is looked for:

* Python files: their docstrings and comments only. Code strings are left alone: tests make up paths on purpose
  (``checks/ihs/test_a.py`` in a layout test's data).
* The README, the pages, the Makefile, tox.ini, the TOML files, shell scripts and Containerfiles outside
  ``snippets/``: the whole text.
* Not read: ``snippets/`` (what a reader copies; its paths are the reader's machine's), the facts tables, the
  declarations, the package locks, and the negative cases in ``bad/`` folders, which may name what does not exist.

Passed over, each on purpose: a path with a placeholder or a pattern in it (``<host>``, ``NAME``, ``HOST``,
``*``, ``{...}``, ``[...]``, ``...``), a one-letter example (``checks/x/test_y.py``, ``docs/how-to/x.md``), and
build output: a path under a folder .gitignore names (``docs/_charts/``) or under ``zrunbook/_shipped``, which the
wheel build fills (zrunbook/wheel_hook.py).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from zrunbook import ROOT

BUILT = ("zrunbook/_shipped",)  # made by the wheel build, never in the tree
PLACEHOLDER = re.compile(r"[<>*{}\[\]]|\.\.\.|NAME|HOST|PATH|(?:^|/)(?:[a-z]|test_[a-z])(?:/|\.\w+$|$)")
WHOLE_TEXT = {".md", ".toml", ".ini", ".sh", ".cfg"}
WHOLE_NAMES = {"Makefile", "run"}
NOT_READ = ("snippets/", "facts/", "zrunbook/declarations.tsv", "checks/hosts/locks/")


def ignored() -> list[str]:
    """The folders .gitignore leaves out, as relative paths (``build``, ``docs/_charts``...)."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return [line.strip().strip("/") for line in lines if line.strip().endswith("/") and not line.startswith("#")]


def top_folders(root: Path = ROOT) -> list[str]:
    skip = {".git", *ignored()}
    return sorted(p.name for p in root.iterdir() if p.is_dir() and p.name not in skip)


def path_pattern(folders: list[str]) -> re.Pattern:
    heads = "|".join(re.escape(f) for f in folders)
    return re.compile(rf"(?<![\w./-])(?:{heads})/[\w./<>*{{}}\-\[\]]*[\w>*}}\]]")


def python_prose(text: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python source."""
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                for i, line in enumerate(body[0].value.value.splitlines()):
                    yield body[0].lineno + i, line


def read(rel: str, text: str) -> Iterator[tuple[int, str]]:
    if rel.endswith(".py"):
        yield from python_prose(text)
    else:
        yield from enumerate(text.splitlines(), 1)


def sources(root: Path = ROOT) -> Iterator[str]:
    skip = tuple(f"{d}/" for d in (".git", *ignored()))
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or rel.startswith(skip + NOT_READ) or "/bad/" in f"/{rel}" or "__pycache__" in rel:
            continue
        if path.suffix in WHOLE_TEXT | {".py"} or path.name in WHOLE_NAMES or path.name.startswith("Containerfile"):
            yield rel


def missing(rel: str, text: str, folders: list[str], exists) -> list[str]:
    out = []
    built = tuple(ignored()) + BUILT
    for line, prose in read(rel, text):
        for match in path_pattern(folders).finditer(prose):
            named = match.group(0).rstrip("./")
            if PLACEHOLDER.search(named) or named.startswith(built):
                continue
            if not exists(named):
                out.append(f"{rel}:{line}: {named} does not exist")
    return out


def test_every_path_a_docstring_comment_readme_or_page_names_exists():
    folders = top_folders()
    problems = [p for rel in sources() for p in missing(rel, (ROOT / rel).read_text(encoding="utf-8"), folders,
                                                         lambda named: (ROOT / named).exists())]
    assert problems == [], "\n".join(problems)


def test_the_path_check_finds_a_stale_path_and_passes_over_placeholders_and_code():
    folders = ["checks", "facts", "zrunbook"]
    source = ('"""Rules in facts/token-flags.csv; see checks/x/test_y.py and checks/hosts/locks/<host>.tsv."""\n'
              'EXAMPLE = "checks/ihs/test_a.py"  # the table is facts/crypto/token-flags.csv\n')
    exists = {"facts/crypto/token-flags.csv"}.__contains__
    assert missing("zrunbook/m.py", source, folders, exists) == [
        "zrunbook/m.py:1: facts/token-flags.csv does not exist"]
    assert missing("README.md", "Run `zrunbook/gone.py`, then build/html/index.html.\n", folders, exists) == [
        "README.md:1: zrunbook/gone.py does not exist"]
    assert "build" not in top_folders()
    assert "snippets" in top_folders()
