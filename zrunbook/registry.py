"""The checker registry: ``zrunbook/checkers.toml`` names every checker a test or a page may name.

``kind = "static"`` reads the file only; ``kind = "host"`` runs it on a container host. A static checker names
its ``validator`` ("module:function", a function taking a file's Path and returning its problems, [] when fine),
the ``files`` under snippets/ it applies to and the ``bad`` files under checks/ it must reject (globs); each bad
file declares in its header what the checker must report (zrunbook/negatives.py).

* ``checkers()`` loads and validates the registry: an unknown key, a missing key, a glob that matches nothing or
  a validator that does not import is a ``RegistryError`` naming the checker.
* ``validator(name)`` is the checker's function; ``cases()`` and ``bad_cases()`` are (checker, file) pairs.
"""

from __future__ import annotations

import functools
import importlib
import tomllib
from collections.abc import Callable
from pathlib import Path

from zrunbook import ROOT, SNIPPETS
from zrunbook.snippets import expand

REGISTRY = Path(__file__).with_name("checkers.toml")
CHECKS = ROOT / "checks"  # the negative cases live under checks/<chapter>/bad/
KINDS = ("static", "host")
KEYS = {"static": {"kind", "evidence", "what", "validator", "files", "bad"}, "host": {"kind", "evidence", "what"}}
# May be given: program = the proprietary program and level that ran, where evidence is "ran" ("GSKit 8.0.60.5"):
# the badge says "ran (GSKit 8.0.60.5)".
OPTIONAL = {"static": set(), "host": {"program"}}
# What a pass proves: the real program ran the snippet, a stand-in ran it, or a validator checked its form.
EVIDENCE = {"ran": "ran", "stand-in": "stand-in", "form": "form checked"}

Validator = Callable[[Path], list[str]]


class RegistryError(ValueError):
    """checkers.toml is wrong; the message names the checker."""


def load(path: Path = REGISTRY, snippets: Path = SNIPPETS, checks: Path = CHECKS, *,
         deep: bool = True) -> dict[str, dict]:
    """The registry at ``path``, validated against the snippets and negative cases on disk. ``deep=False``
    checks the keys only (no globs, no validator imports): enough for the guide, which shows names and
    evidence and must not need the validators' libraries."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    errors = []
    for name, entry in data.items():
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind not in KINDS:
            errors.append(f"checker {name!r}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
            continue
        if unknown := sorted(set(entry) - KEYS[kind] - OPTIONAL[kind]):
            errors.append(f"checker {name!r}: unknown key(s) {', '.join(unknown)} for a {kind} checker "
                          f"(allowed: {', '.join(sorted(KEYS[kind] | OPTIONAL[kind]))})")
        if "program" in entry and entry.get("evidence") != "ran":
            errors.append(f"checker {name!r}: program names what ran, so evidence must be 'ran'")
        if missing := sorted(KEYS[kind] - set(entry)):
            errors.append(f"checker {name!r}: missing key(s) {', '.join(missing)}")
        if "evidence" in entry and entry["evidence"] not in EVIDENCE:
            errors.append(f"checker {name!r}: evidence must be one of {', '.join(EVIDENCE)}, not {entry['evidence']!r}")
        if kind != "static" or not deep:
            continue
        for key, root in (("files", snippets), ("bad", checks)):
            patterns = entry.get(key, [])
            if not isinstance(patterns, list) or not patterns:
                errors.append(f"checker {name!r}: {key} must be a non-empty list of globs")
                continue
            errors += [f"checker {name!r}: {key} glob {p!r} matches no file under {root.name}/"
                       for p in patterns if not expand(p, root)]
        if "validator" in entry:
            try:
                _import(entry["validator"])
            except Exception as exc:  # an ImportError, a missing function, a malformed path: all name the checker
                errors.append(f"checker {name!r}: validator {entry['validator']!r} does not import: {exc}")
    if errors:
        raise RegistryError(f"{path.name} is wrong:\n  " + "\n  ".join(errors))
    return data


def _import(spec: str) -> Validator:
    module, sep, function = spec.partition(":")
    if not sep or not module or not function:
        raise ValueError("expected 'package.module:function'")
    found = getattr(importlib.import_module(module), function)
    if not callable(found):
        raise TypeError(f"{function} is not a function")
    return found


@functools.cache
def checkers() -> dict[str, dict]:
    """The project's registry, loaded and validated once."""
    return load()


@functools.cache
def declared() -> dict[str, dict]:
    """The project's registry with its keys checked only (what the guide's build reads)."""
    return load(deep=False)


def evidence(name: str) -> str | None:
    """The words a badge shows for what checker ``name``'s pass proves; None for a checker not registered."""
    entry = declared().get(name)
    if not entry:
        return None
    words = EVIDENCE[entry["evidence"]]
    return f"{words} ({entry['program']})" if "program" in entry else words


def static() -> dict[str, dict]:
    return {name: entry for name, entry in checkers().items() if entry["kind"] == "static"}


def validator(name: str) -> Validator:
    """The validator of static checker ``name``."""
    entry = checkers().get(name)
    if entry is None or entry["kind"] != "static":
        raise KeyError(f"{name!r} is not a static checker in {REGISTRY.name}")
    return _import(entry["validator"])


def cases() -> list[tuple[str, str]]:
    """(checker, snippet path relative to snippets/) for every static checker and every file it applies to."""
    return [(name, rel) for name, entry in static().items()
            for rel in sorted({rel for p in entry["files"] for rel in expand(p, SNIPPETS)})]


def bad_cases() -> list[tuple[str, str]]:
    """(checker, negative case relative to checks/) for every static checker and every file it must reject."""
    return [(name, rel) for name, entry in static().items()
            for rel in sorted({rel for p in entry["bad"] for rel in expand(p, CHECKS)})]


def problems(name: str, path: Path) -> list[str]:
    """Run static checker ``name`` on ``path``."""
    return validator(name)(path)
