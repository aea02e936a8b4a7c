"""Shared pytest configuration: the snippet-coverage plugin and the container-host fixtures."""

import pytest

from zrunbook import ledger

pytest_plugins = ["checks.zrunbook_plugin", "checks.hosts.plugin", "checks.sphinx_roots"]
WORKERS = 2


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown under -p no:xdist
def pytest_xdist_auto_num_workers(config):
    """The xdist workers for `-n auto` (tox.ini): two, but none for a run narrowed with --zr-only to
    snippets only static checkers check (by the committed declarations): each worker
    collects all of checks/ first, which costs more than the few tests the two would share."""
    from zrunbook.snippets import expand

    only = config.getoption("zr_only", None)
    if not only:
        return WORKERS
    try:
        declared = ledger.load_declarations()
    except ValueError:
        return WORKERS
    hosts = {c.get("host") for rel in expand(only) for c in declared.get(rel, [])}
    return 0 if hosts == {None} else WORKERS
