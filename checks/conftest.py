"""Shared pytest configuration: the snippet-coverage plugin and the container-host fixtures."""

import os

import pytest

from zrunbook import ledger

pytest_plugins = ["checks.zrunbook_plugin", "checks.hosts.plugin", "checks.sphinx_roots"]
# One xdist worker more than the CPUs this run may use: the host tests wait on the container engine, on servers
# starting and on networks going idle, so two workers left about a third of a 2-CPU machine unused (process
# accounting over a whole make check counted 1545 CPU-seconds of the 2354 its 1177 s had). Measured on that
# machine, 2026-11-26: 1176 s with two workers, 1043 s with three, every test passed in both (`make bench
# WHAT=hosts BENCH=whole` repeats it).
WORKERS = len(os.sched_getaffinity(0)) + 1


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown under -p no:xdist
def pytest_xdist_auto_num_workers(config):
    """The xdist workers for `-n auto` (tox.ini): WORKERS, but none for a run narrowed with --zr-only to
    snippets only static checkers check (by the committed declarations): each worker
    collects all of checks/ first, which costs more than the few tests the workers would share."""
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
