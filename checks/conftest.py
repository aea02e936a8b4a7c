"""Shared pytest configuration: the snippet-coverage plugin and the container-host fixtures."""

import json
from pathlib import Path

import pytest

pytest_plugins = ["checks.zrunbook_plugin", "checks.hosts.plugin"]
COVERAGE = Path(__file__).resolve().parent.parent / "build" / "checks" / "coverage.json"
WORKERS = 2


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown under -p no:xdist
def pytest_xdist_auto_num_workers(config):
    """The xdist workers for `-n auto` (tox.ini): two, but none for a run narrowed with --zr-only to
    snippets only static checkers check (by the last coverage map a guide build wrote): each worker
    collects all of checks/ first, which costs more than the few tests the two would share."""
    from checks.zrunbook_plugin import expand, snippet_root  # imported here: pytest_plugins imports it first

    only = config.getoption("zr_only", None)
    if not only:
        return WORKERS
    try:
        coverage = json.loads(COVERAGE.read_text(encoding="utf-8")).get("snippets", {})
    except (OSError, ValueError):
        return WORKERS
    hosts = {c.get("host") for rel in expand(snippet_root(config), only) for c in coverage.get(rel, [])}
    return 0 if hosts == {None} else WORKERS
