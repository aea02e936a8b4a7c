"""Values the front page quotes about the checks themselves, computed from the checker registry."""

from __future__ import annotations

from zrunbook import registry

DEPENDS_ON = ["zrunbook/checkers.toml"]


def _names(evidence: str) -> str:
    names = sorted(n for n, e in registry.declared().items() if e["evidence"] == evidence)
    return ", ".join(names)


def checkers_ran() -> str:
    return _names("ran")


def checkers_stand_in() -> str:
    return _names("stand-in")


def checkers_form() -> str:
    return _names("form")
