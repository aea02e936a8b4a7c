"""The files under snippets/: listing, glob expansion and their sha256, in one place."""

from __future__ import annotations

import hashlib
from pathlib import Path

from zrunbook import SNIPPETS


def all_snippets(root: Path = SNIPPETS) -> list[str]:
    """Every snippet, as a path relative to ``root``, sorted."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def expand(pattern: str, root: Path = SNIPPETS) -> list[str]:
    """The snippets a path or glob (relative to ``root``) names; [] when it names none."""
    if any(ch in pattern for ch in "*?["):
        return sorted(p.relative_to(root).as_posix() for p in root.glob(pattern) if p.is_file())
    return [pattern] if (root / pattern).is_file() else []


def digest(rel: str, root: Path = SNIPPETS) -> str | None:
    path = root / rel
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def digests(root: Path = SNIPPETS) -> dict[str, str]:
    return {rel: digest(rel, root) for rel in all_snippets(root)}
