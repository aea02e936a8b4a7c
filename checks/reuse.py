"""The one-change loop: a plain ``make check`` on a maintainer's machine reruns only the tests whose inputs changed.

A test's verdict from the last run on this machine (build/results.json) is reused when that run passed it and
nothing it depends on changed since:

* every snippet, facts file, negative case and other repository file it read (observed: checks/observe.py), at the
  same sha256;
* its code: the test file, the project modules it imports (transitively, from their import statements, as a
  prepared state's key reads them: checks/hosts/steps.py), the conftest files above it and the pytest plugins,
  with the validators and checkers.toml when it imports the registry (which loads validators by name);
* the container images and prepared states it started from, at the same tags (each tag hashes its own inputs).

Some tests always run: an outcome that is a measurement or a timing claim (``exclusive_cpu``), and the tests whose
inputs the observer cannot see (a guide build, a browser, a walkthrough of the pages: they read docs/ in other
processes). CI and ``make check ALL=1`` reuse nothing (the Makefile sets ``ZR_REUSE=1`` otherwise); a fresh clone has
no results, so nothing to reuse.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from checks import observe
from checks.hosts import engine as eng
from checks.hosts.steps import _project_imports
from zrunbook import registry
from zrunbook.snippets import digest

REPO = observe.REPO
PLUGINS = ("checks/conftest.py", "checks/zrunbook_plugin.py", "checks/hosts/plugin.py", "checks/observe.py",
           "checks/reuse.py")
UNSEEN_FIXTURES = {"site", "pdf", "tree", "page", "browser", "base_url", "clean_host"}


def enabled() -> bool:
    return os.environ.get("ZR_REUSE") == "1"


@functools.cache
def code_files(test_file: Path) -> tuple[Path, ...]:
    """The Python (and the registry's data) a test file's outcome depends on, by the rule in the docstring."""
    todo = [test_file, *(REPO / p for p in PLUGINS)]
    todo += [d / "conftest.py" for d in test_file.parents if d.is_relative_to(REPO / "checks")]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        if path.suffix == ".py":
            todo += _project_imports(path)
        if path == REPO / "zrunbook" / "registry.py":
            todo.append(REPO / "zrunbook" / "checkers.toml")
            for spec in registry.checkers().values():
                module = spec.get("validator", "").split(":")[0]
                if module:
                    todo.append(REPO.joinpath(*module.split(".")).with_suffix(".py"))
    return tuple(sorted(seen))


@functools.cache
def code_digest(test_file: Path) -> str:
    h = hashlib.sha256()
    for path in code_files(test_file):
        h.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def current(kind: str, rel: str) -> str | None:
    root = {"snippets": observe.SNIPPETS, "facts": observe.FACTS, "bad": observe.CHECKS, "files": REPO}[kind]
    return digest(rel, root)


@functools.cache
def image_tags() -> dict[str, str]:
    """Every host image's and walkthrough image's tag as a build now would make it (no engine call)."""
    engine = eng.Engine("docker", "docker")  # image_tag hashes files only
    tags = {}
    for name, spec in eng.HOSTS.items():
        tags[name] = engine.image_tag(spec)
        tags[f"{name}-walkthrough"] = engine.image_tag(spec, eng.WALKTHROUGH_CONTAINERFILE)
    return tags


_STATE_TAGS: dict[tuple[str, str], str] = {}


def state_tag(host_name: str, state) -> str:
    """The tag HostPool.prepared gives state on host_name now (hashed once per run and state)."""
    key = (host_name, state.name)
    if key not in _STATE_TAGS:
        base = image_tags()[f"{host_name}-walkthrough" if state.clean else host_name]
        _STATE_TAGS[key] = f"{eng.image_prefix()}/{host_name}-{state.name}:{eng._hash(base, state.inputs())}"
    return _STATE_TAGS[key]


def why_not(item, entry: dict | None, host_name: str | None) -> str | None:
    """None when the recorded verdict may stand; else why the test runs (for a maintainer asking)."""
    if item.get_closest_marker("exclusive_cpu") is not None:
        return "a timing claim (exclusive_cpu)"
    if set(getattr(item, "fixturenames", ())) & UNSEEN_FIXTURES:
        return "it reads what the observer cannot see (a guide build, a browser or the pages' walk)"
    if not entry or entry.get("outcome") != "passed":
        return "no passing run recorded here"
    if entry.get("code") != code_digest(Path(item.path)):
        return "its code changed"
    for kind in ("snippets", "facts", "bad", "files"):
        for rel, sha in entry.get(kind, {}).items():
            if current(kind, rel) != sha:
                return f"{kind} {rel} changed"
    images = image_tags()
    for name, tag in entry.get("images", {}).items():
        if images.get(name) != tag:
            return f"the {name} image changed"
    marker = item.get_closest_marker("from_state")
    states = dict(entry.get("states", {}))
    if marker is not None and host_name is not None:
        name = f"{host_name}-{marker.args[0].name}"
        if states.pop(name, None) != state_tag(host_name, marker.args[0]):
            return f"the state {name} changed"
    if states:
        return f"it started from states reuse cannot recompute ({', '.join(sorted(states))})"
    return None
