"""A throw-away copy of the project tree, and the two commands the invariants are enforced by."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPIED = ["conf.py", "pyproject.toml", "docs", "snippets", "facts", "zrunbook", "checks"]


class Tree:
    def __init__(self, path: Path):
        self.path = path

    def write(self, rel: str, text: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return target

    def add_page(self, name: str, body: str) -> str:
        """A page under docs/ that is part of the toctree; returns its path relative to the tree."""
        rel = f"docs/{name}.md"
        self.write(rel, body)
        index = self.path / "docs" / "index.md"
        index.write_text(index.read_text(encoding="utf-8")
                         + f"\n```{{toctree}}\n:hidden:\n\n{name}\n```\n", encoding="utf-8")
        return rel

    def build(self) -> subprocess.CompletedProcess:
        env = dict(os.environ, ZR_NO_COLLECT="1")
        return subprocess.run(
            [sys.executable, "-m", "sphinx", "-b", "dummy", "-q", "-c", ".", "docs", "build/dummy"],
            cwd=self.path, capture_output=True, text=True, env=env)

    def check_coverage(self) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "--zr-require-coverage",
             "-k", "every-snippet-is-checked", "checks"],
            cwd=self.path, capture_output=True, text=True, env=dict(os.environ, ZR_HOSTS=""))


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
