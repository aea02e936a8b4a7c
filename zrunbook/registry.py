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
# May be given: program = the proprietary library and level that ran ("GSKit 8.0.60.5"), where the evidence kind has
# a badge_program to say it in; the kinds in NEEDS_PROGRAM require it.
# A static checker may say which other snippets its validator reads besides the file it is given (reads = [globs]:
# the study's GSKit commands beside its httpd.conf, the facts beside a measured file); the tests that run it
# declare them (checks/uses.py), since the observer sees them read.
OPTIONAL = {"static": {"reads"}, "host": {"program"}}
# The evidence vocabulary: the [evidence.NAME] tables of checkers.toml, each with the words a badge shows
# (badge, and badge_program where a program is named) and one line saying what a pass proves (means).
VOCABULARY = "evidence"
KIND_KEYS = {"badge", "means"}
KIND_OPTIONAL = {"badge_program"}
NEEDS_PROGRAM = {"harness"}  # a harness drives a library: the badge must name it
Validator = Callable[[Path], list[str]]


class RegistryError(ValueError):
    """checkers.toml is wrong; the message names the checker."""


def _vocabulary(kinds, errors: list[str]) -> dict[str, dict]:
    if not isinstance(kinds, dict) or not kinds:
        errors.append(f"[{VOCABULARY}.NAME] tables are missing: each evidence kind needs badge and means")
        return {}
    for name, kind in kinds.items():
        if not isinstance(kind, dict):
            errors.append(f"evidence {name!r}: must be a table with badge and means")
            continue
        if missing := sorted(KIND_KEYS - set(kind)):
            errors.append(f"evidence {name!r}: missing key(s) {', '.join(missing)}")
        if unknown := sorted(set(kind) - KIND_KEYS - KIND_OPTIONAL):
            errors.append(f"evidence {name!r}: unknown key(s) {', '.join(unknown)}")
    return kinds


def load(path: Path = REGISTRY, snippets: Path = SNIPPETS, checks: Path = CHECKS, *,
         deep: bool = True) -> dict[str, dict]:
    """The checkers of the registry at ``path`` (its [evidence] vocabulary taken out: ``kinds()``), validated
    against the snippets and negative cases on disk. ``deep=False`` checks the keys only (no globs, no validator
    imports): enough for the guide, which shows names and evidence and must not need the validators' libraries."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    errors: list[str] = []
    kinds = _vocabulary(data.pop(VOCABULARY, None), errors)
    for name, entry in data.items():
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind not in KINDS:
            errors.append(f"checker {name!r}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
            continue
        if unknown := sorted(set(entry) - KEYS[kind] - OPTIONAL[kind]):
            errors.append(f"checker {name!r}: unknown key(s) {', '.join(unknown)} for a {kind} checker "
                          f"(allowed: {', '.join(sorted(KEYS[kind] | OPTIONAL[kind]))})")
        if missing := sorted(KEYS[kind] - set(entry)):
            errors.append(f"checker {name!r}: missing key(s) {', '.join(missing)}")
        evidence = entry.get("evidence")
        if "evidence" in entry and evidence not in kinds:
            errors.append(f"checker {name!r}: evidence must be one of {', '.join(kinds)}, not {evidence!r}")
        elif "program" in entry and "badge_program" not in kinds.get(evidence, {}):
            errors.append(f"checker {name!r}: program names the library that ran, so evidence must be one of "
                          f"{', '.join(k for k, v in kinds.items() if 'badge_program' in v)}, not {evidence!r}")
        elif evidence in NEEDS_PROGRAM and "program" not in entry:
            errors.append(f"checker {name!r}: evidence {evidence!r} must name the library that ran (program = ...)")
        if kind != "static" or not deep:
            continue
        errors += [f"checker {name!r}: reads glob {p!r} matches no file under {snippets.name}/"
                   for p in entry.get("reads", []) if not expand(p, snippets)]
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


def kinds(path: Path = REGISTRY) -> dict[str, dict]:
    """The evidence vocabulary of the registry at ``path``, in its order: name -> {badge, means[, badge_program]}."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    errors: list[str] = []
    found = _vocabulary(data.get(VOCABULARY), errors)
    if errors:
        raise RegistryError(f"{path.name} is wrong:\n  " + "\n  ".join(errors))
    return found


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


@functools.cache
def vocabulary() -> dict[str, dict]:
    """The project's evidence kinds (what the front page lists and a badge's words come from)."""
    return kinds()


def evidence_kind(name: str) -> str | None:
    """The machine name of checker ``name``'s evidence ("ran", "harness", ...); None for a checker not registered."""
    entry = declared().get(name)
    return entry["evidence"] if entry else None


def evidence(name: str) -> str | None:
    """The words a badge shows for what checker ``name``'s pass proves; None for a checker not registered."""
    entry = declared().get(name)
    if not entry:
        return None
    kind = vocabulary()[entry["evidence"]]
    if "program" in entry:
        return kind["badge_program"].format(program=entry["program"])
    return kind["badge"]


def carried(checkers: set[str] | list[str]) -> dict[str, list[str]]:
    """Evidence kind -> the given checkers of that kind (a file's declared checkers: the kinds its badges carry)."""
    found: dict[str, list[str]] = {}
    for checker in sorted(set(checkers)):
        kind = evidence_kind(checker)
        if kind:
            found.setdefault(kind, []).append(checker)
    return found


def claim_problem(kind: str, rel: str, checkers: set[str] | list[str]) -> str | None:
    """Why a page may not claim evidence ``kind`` for snippet ``rel`` whose declared checkers are ``checkers``
    (None when its badges carry that kind): the one rule the guide's {evidence} role and the static check share."""
    if kind not in vocabulary():
        return f"{kind!r} is not an evidence kind of zrunbook/checkers.toml ({', '.join(vocabulary())})"
    kinds = carried(checkers)
    if not kinds:
        return f"names {rel}, which no declared test checks (zrunbook/declarations.tsv)"
    if kind not in kinds:
        badges = "; ".join(f"{k} ({', '.join(v)})" for k, v in kinds.items())
        return f"claims {kind!r} for {rel}, but its badges carry only: {badges}"
    return None


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


def reads(name: str) -> list[str]:
    """The globs (under snippets/) of what static checker ``name``'s validator reads besides the file it checks."""
    return list(static()[name].get("reads", []))


def problems(name: str, path: Path) -> list[str]:
    """Run static checker ``name`` on ``path``."""
    return validator(name)(path)
