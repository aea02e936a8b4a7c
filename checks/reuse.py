"""The one-change loop: a plain ``make check`` on a maintainer's machine reruns only the tests whose inputs changed.

A test's verdict from the last run on this machine (build/results.json) is reused when that run passed it and
nothing it depends on changed since:

* every snippet, facts file, negative case and other repository file it read (observed: checks/observe.py), at the
  same sha256;
* its code: the test file, the project modules it imports (transitively, from their import statements, as a
  prepared state's key reads them: checks/hosts/steps.py), the conftest files above it and the pytest plugins
  (but not this module, which decides what runs and never what a test asserts, unless the test imports it),
  with the validators and checkers.toml when it imports the registry (which loads validators by name);
* the container images and prepared states it started from, at the same tags (each tag hashes its own inputs).

The tests whose inputs the observer cannot see (a guide build, a browser on it, a copy of the tree: they read files
in other processes) are keyed on what those processes can read: the whole tree (every file git tracks or would
track, ``tree_digest``), and for the guide also the badges' outcomes it shows from the last run's results
(``badges_digest``). Nothing narrower holds: the guide transcludes the snippets, bundles every one of them with its
sha256 and reads checks/ for the outcome boxes' negatives, so an edit anywhere runs them again, and a run whose
badges changed runs them once more (the guide built in it showed the earlier badges). A walk of the pages on a clean
host is not one of them: it reads the pages in this process (observed) and starts from states whose tags hash them.

Tests whose outcome is a measurement or a timing claim (``exclusive_cpu``) always run. CI and ``make check ALL=1``
reuse nothing (the Makefile sets ``ZR_REUSE=1`` otherwise); a fresh clone has no results, so nothing to reuse.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from checks import observe
from checks.hosts import engine as eng
from checks.hosts.steps import State, _project_imports
from zrunbook import ledger, registry
from zrunbook.snippets import digest

REPO = observe.REPO
# The plugins every test's outcome goes through; through them, not this module (code_files).
PLUGINS = ("checks/conftest.py", "checks/zrunbook_plugin.py", "checks/hosts/plugin.py", "checks/observe.py")
GUIDE_FIXTURES = {"site", "pdf", "page", "browser", "base_url"}  # a guide build: the tree and the badges it shows
UNSEEN_FIXTURES = GUIDE_FIXTURES | {"tree"}  # and a copy of the tree, read by a pytest run in it
STATE_FIXTURES = {"fresh_host", "clean_host"}  # the fixtures that start a test where its from_state mark says


def enabled() -> bool:
    return os.environ.get("ZR_REUSE") == "1"


@functools.cache
def code_files(test_file: Path) -> tuple[Path, ...]:
    """The Python (and the registry's data) a test file's outcome depends on, by the rule in the docstring. This
    module counts only where the test file itself imports it (checks/test_reuse.py): reached through the plugins, it
    decides which tests run and what is recorded, never what a test asserts."""
    own = _closure([test_file], blocked=set())
    return tuple(sorted(own | _closure([REPO / p for p in PLUGINS]
                                       + [d / "conftest.py" for d in test_file.parents
                                          if d.is_relative_to(REPO / "checks")], blocked={THIS})))


THIS = Path(__file__).resolve()


def _closure(todo: list[Path], blocked: set[Path]) -> set[Path]:
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen or path in blocked or not path.is_file():
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
    return seen


@functools.cache
def code_digest(test_file: Path) -> str:
    h = hashlib.sha256()
    for path in code_files(test_file):
        h.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def tree_files(root: Path = REPO) -> list[str]:
    """Every file of the working tree that git tracks or would track (untracked but not ignored), sorted."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, check=True).stdout
    return sorted({p for p in out.decode().split("\0") if p and (root / p).is_file()})


@functools.cache
def tree_digest(root: Path = REPO) -> str:
    """One sha256 over the tree's paths and contents (about 850 files, a tenth of a second): what a process the
    observer cannot see may read."""
    h = hashlib.sha256()
    with observe.quiet():  # the key's reads are not the test's: the key itself is recorded
        for rel in tree_files(root):
            h.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def badges_digest(results: Path = ledger.RESULTS) -> str:
    """A sha256 of every badge's outcome the guide shows from these results (not dates or commits, which a reused
    verdict restamps): a guide built from other outcomes is another guide."""
    with observe.quiet():
        view = ledger.read(results)
        outcomes = {rel: [(e["checker"], e["host"], e["outcome"]) for e in ledger.entries(view, rel, digest(rel))]
                    for rel in sorted(view["snippets"])}
    return hashlib.sha256(json.dumps(outcomes, sort_keys=True).encode()).hexdigest()


def fixtures(item) -> set[str]:
    """The fixtures a test requests, without the names a ``parametrize`` mark gives values directly: pytest lists
    those among the fixture names too (``site`` in test_apache_tls.py is a site configuration, not the guide)."""
    direct: set[str] = set()
    for mark in getattr(item, "iter_markers", lambda name: ())("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        indirect = mark.kwargs.get("indirect", False)
        given = set(names) if indirect is True else set(indirect) if isinstance(indirect, (list, tuple)) else set()
        direct |= set(names) - given
    return set(getattr(item, "fixturenames", ())) - direct


def unseen(fixturenames) -> dict[str, str]:
    """The keys of what a test's unseen fixtures read (``{}`` for a test with none). The plugin records them from
    pytest's fixture names, so a test with a parameter named like a guide fixture carries keys that why_not, which
    asks ``fixtures(item)``, never compares."""
    names = set(fixturenames)
    keys = {"tree": tree_digest()} if names & UNSEEN_FIXTURES else {}
    if names & GUIDE_FIXTURES:
        keys["badges"] = badges_digest()
    return keys


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
        with observe.quiet():  # hashing the state's inputs is not a test's read: the tag is recorded
            _STATE_TAGS[key] = f"{eng.image_prefix()}/{host_name}-{state.name}:{eng._hash(base, state.inputs())}"
    return _STATE_TAGS[key]


def why_not(item, entry: dict | None, host_name: str | None) -> str | None:
    """None when the recorded verdict may stand; else why the test runs (for a maintainer asking)."""
    if item.get_closest_marker("exclusive_cpu") is not None:
        return "a timing claim (exclusive_cpu)"
    if not entry or entry.get("outcome") != "passed":
        return "no passing run recorded here"
    keys = unseen(fixtures(item))
    recorded = entry.get("unseen", {})
    for key, why in (("tree", "the tree changed (a guide build, a browser or a copy of the tree reads it)"),
                     ("badges", "the badges the guide shows changed")):
        if key in keys and recorded.get(key) != keys[key]:
            return why
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
    # a module's from_state mark reaches its tests on the shared `host` too, which never start from it
    if marker is not None and host_name is not None and STATE_FIXTURES & fixtures(item):
        name = f"{host_name}-{marker.args[0].name}"
        if states.pop(name, None) != state_tag(host_name, marker.args[0]):
            return f"the state {name} changed"
    unknown = []
    for name, tag in sorted(states.items()):  # states a fixture or a helper started it from (Pool.prepared)
        found = state_named(name)
        if found is None:
            unknown.append(name)
        elif state_tag(*found) != tag:
            return f"the state {name} changed"
    if unknown:
        return f"it started from states reuse cannot recompute ({', '.join(unknown)})"
    return None


def reasons(whys) -> dict[str, int]:
    """Why the tests that run do run, most frequent first, counted: what a maintainer reads after a plain
    ``make check`` ("ran: 3 because snippets ihs/apache/tls.conf changed")."""
    counts: dict[str, int] = {}
    for why in whys:
        if why is not None:
            counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def defined_states() -> dict[str, State]:
    """Every State the imported checks modules define, by name: a module's own (``TOKEN_KEY``) or in a dict of them
    (``WALKED``). Read from the modules, so no list is kept; a state whose module was not imported is not found."""
    found: dict[str, State] = {}
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("checks."):
            continue
        for value in list(vars(module).values()):
            for state in (value.values() if isinstance(value, dict) else (value,)):
                if isinstance(state, State):
                    found.setdefault(state.name, state)
    return found


def state_named(name: str):
    """(host, State) for a recorded state name such as ``debian13-amd64-ihs-token-key``, or None."""
    states = defined_states()
    for host in eng.HOSTS:
        if name.startswith(f"{host}-") and name[len(host) + 1:] in states:
            return host, states[name[len(host) + 1:]]
    return None
