"""pytest plugin: which checker checks which snippet, and what happened when it ran.

* ``@pytest.mark.snippet("crypto/x.sh", "db2/*.clp", checker="shellcheck")`` declares that a test
  checks those files (paths or globs relative to ``snippets/``) with a checker named in
  ``checks/checkers.toml``. A pattern that matches nothing, or an unknown checker, is an error.
* The host of a test is the value of its ``host``/``fresh_host`` parameter (container hosts), or
  "static" when it has none.
* ``--zr-coverage=FILE`` writes snippet -> [checker, host, test] after collection (the Sphinx
  extension reads it for the badges).
* ``--zr-results=FILE`` merges each test's outcome into FILE at the end of the session, with the
  sha256 of the snippet it checked, so a badge never shows a pass for a file that changed since.
* ``--zr-only=GLOB`` keeps only the tests that check the matching snippets.
* ``--zr-require-coverage`` adds the test ``every snippet is checked``: it fails, naming the files,
  when a snippet under ``snippets/`` has no checker (invariant 2). ``make check`` sets it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ("debian13-amd64", "debian13-s390x")
HOST_PARAMS = ("host", "fresh_host")
# Fixtures that start a container, build the guide or open a browser: what --zr-static leaves out.
DYNAMIC_FIXTURES = {"host", "fresh_host", "published_host", "ipc_host", "zr_host_pool", "site", "pdf", "tree",
                    "page", "browser", "base_url"}


def snippet_root(config) -> Path:
    return Path(config.rootpath) / "snippets"


def load_checkers(config) -> dict:
    with open(Path(config.rootpath) / "checks" / "checkers.toml", "rb") as fh:
        return tomllib.load(fh)


def all_snippets(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def expand(root: Path, pattern: str) -> list[str]:
    if any(ch in pattern for ch in "*?["):
        return sorted(p.relative_to(root).as_posix() for p in root.glob(pattern) if p.is_file())
    return [pattern] if (root / pattern).is_file() else []


def host_of(item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    for name in HOST_PARAMS:
        value = callspec.params.get(name)
        if value in HOSTS:
            return value
    for value in callspec.params.values():
        if value in HOSTS:
            return value
    return None


def pytest_addoption(parser):
    group = parser.getgroup("zrunbook")
    group.addoption("--zr-coverage", metavar="FILE", help="write snippet coverage after collection")
    group.addoption("--zr-results", metavar="FILE", help="merge outcomes per snippet into FILE")
    group.addoption("--zr-require-coverage", action="store_true",
                    help="fail when a snippet under snippets/ has no checker")
    group.addoption("--zr-static", action="store_true",
                    help="only the static checks: no container host, no guide build, no browser")
    group.addoption("--zr-only", metavar="GLOB",
                    help="run only the tests that check snippets matching GLOB (relative to snippets/)")


class EverySnippetIsChecked(pytest.Item):
    """Invariant 2 as a test, so it is counted in pytest's closing line."""

    def __init__(self, *, uncovered, **kwargs):
        super().__init__(**kwargs)
        self.uncovered = uncovered

    def runtest(self):
        if self.uncovered:
            raise AssertionError(
                "snippets no checker covers (add a test with @pytest.mark.snippet(..., checker=...)):\n"
                + "\n".join(f"  snippets/{rel}" for rel in self.uncovered))

    def repr_failure(self, excinfo):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, "every snippet is checked"


def pytest_collection_modifyitems(session, config, items):
    root = snippet_root(config)
    checkers = load_checkers(config)
    coverage: dict[str, list[dict]] = {}
    errors = []
    for item in items:
        for mark in item.iter_markers("snippet"):
            checker = mark.kwargs.get("checker")
            if checker not in checkers:
                errors.append(f"{item.nodeid}: checker {checker!r} is not in checks/checkers.toml")
                continue
            if not mark.args:
                errors.append(f"{item.nodeid}: @pytest.mark.snippet needs at least one path")
            host = host_of(item)
            if checkers[checker]["kind"] == "host" and host is None:
                errors.append(f"{item.nodeid}: checker {checker!r} runs on a host, "
                              "but the test uses no host/fresh_host fixture")
            files = []
            for pattern in mark.args:
                matched = expand(root, pattern)
                if not matched:
                    errors.append(f"{item.nodeid}: snippet {pattern!r} matches no file under snippets/")
                files.extend(matched)
            for rel in files:
                coverage.setdefault(rel, []).append(
                    {"checker": checker, "host": host, "test": item.nodeid})
                item.user_properties.append(("zr_snippet", [rel, checker, host]))
    if errors:
        raise pytest.UsageError("snippet markers are wrong:\n  " + "\n  ".join(errors))

    if config.getoption("zr_coverage") and not hasattr(config, "workerinput"):
        out = Path(config.getoption("zr_coverage"))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"snippets": coverage}, indent=1, sort_keys=True), encoding="utf-8")

    if config.getoption("zr_static"):
        keep = [i for i in items if not (set(getattr(i, "fixturenames", ())) & DYNAMIC_FIXTURES)
                and not i.nodeid.startswith("checks/hosts/test_cleanup.py")]  # starts pytest sessions with containers
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    only = config.getoption("zr_only")
    if only:
        wanted = set(expand(root, only))
        if not wanted:
            raise pytest.UsageError(f"--zr-only {only!r} matches no file under snippets/")
        keep = [i for i in items
                if any(v[0] in wanted for k, v in i.user_properties if k == "zr_snippet")]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    if config.getoption("zr_require_coverage"):
        uncovered = [rel for rel in all_snippets(root) if rel not in coverage]
        items.append(EverySnippetIsChecked.from_parent(
            session, name="every-snippet-is-checked", uncovered=uncovered))


class ResultsRecorder:
    def __init__(self, config, path: Path):
        self.config = config
        self.path = path
        self.runs: dict[tuple, dict] = {}
        self.root = snippet_root(config)

    def pytest_runtest_logreport(self, report):
        props = [v for k, v in report.user_properties if k == "zr_snippet"]
        index = dict(v for k, v in report.user_properties if k == "zr_host_index")
        if not props:
            return
        if report.when == "call" or report.outcome in ("failed", "skipped"):
            for rel, checker, host in props:
                key = (rel, checker, host or "static", report.nodeid)
                prev = self.runs.get(key)
                if prev and prev["outcome"] == "failed":
                    continue
                path = self.root / rel
                digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
                self.runs[key] = {"checker": checker, "host": host, "test": report.nodeid,
                                  "outcome": report.outcome, "sha256": digest,
                                  "duration": round(report.duration, 3), "time": int(time.time())}
                if index.get(host, "verified") != "verified":
                    # the host image was built from a Debian index that did not match the signed Release
                    self.runs[key]["index"] = index[host]

    def pytest_sessionfinish(self, session):
        old = {}
        if self.path.exists():
            try:
                old = json.loads(self.path.read_text(encoding="utf-8")).get("snippets", {})
            except ValueError:
                old = {}
        merged: dict[str, dict] = {}
        for rel, entry in old.items():
            if (self.root / rel).is_file():
                merged[rel] = {"runs": [r for r in entry.get("runs", [])
                                        if (rel, r["checker"], r.get("host") or "static", r["test"])
                                        not in self.runs]}
        for (rel, *_), run in sorted(self.runs.items()):
            merged.setdefault(rel, {"runs": []})["runs"].append(run)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"snippets": merged}, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)


def pytest_configure(config):
    results = config.getoption("zr_results")
    if results and not hasattr(config, "workerinput"):
        config.pluginmanager.register(ResultsRecorder(config, Path(results)), "zr-results")
