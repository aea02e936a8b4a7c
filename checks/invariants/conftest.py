"""Fixtures for the invariants: small in-process Sphinx projects (most cases), the real project (a few).

Most cases need only the guide's extensions and build a small project of their own (``sphinx_root``, from
checks/sphinx_roots.py). Two cases run pytest's 'every snippet is checked' invariant, which needs the real
checks/, zrunbook/ and snippets/: they get a throw-away copy (``tree``), because some add a file under
snippets/ or a test under checks/. The untouched guide's build and the Makefile/tox cases read
the repository in place.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPIED = [  # all that collecting checks/ reads
    "conf.py", "pyproject.toml", "docs", "snippets", "facts", "zrunbook", "checks"]


class Tree:
    def __init__(self, path: Path):
        self.path = path

    def write(self, rel: str, text: str) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def pytest(self, *args: str) -> subprocess.CompletedProcess:
        """pytest in the copy on every host (ZR_HOSTS unset), without xdist."""
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", *args],
                              cwd=self.path, capture_output=True, text=True, env=dict(os.environ, ZR_HOSTS=""))

    def check_coverage(self, item: str = "every-snippet-is-checked") -> subprocess.CompletedProcess:
        """One of the whole suite's own items, as make check runs it."""
        return self.pytest("--zr-require-coverage", "-k", item, "checks")

    def write_declarations(self) -> subprocess.CompletedProcess:
        """make declarations, in the copy."""
        return self.pytest("--collect-only", "--zr-require-coverage", "--zr-declarations=zrunbook/declarations.tsv",
                           "checks")


@pytest.fixture
def tree(tmp_path) -> Tree:
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, tmp_path / name,
                            ignore=shutil.ignore_patterns("__pycache__", "_build", "build"))
        else:
            shutil.copy2(src, tmp_path / name)
    return Tree(tmp_path)
