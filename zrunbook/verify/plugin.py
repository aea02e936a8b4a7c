"""The pytest plugin behind ``make verify``: one test per inventory host and runbook step, hosts in parallel.

``python -m zrunbook verify`` runs ``pytest -p zrunbook.verify.plugin zrunbook/verify/fleet.py`` with
``--zr-inventory``, ``--zr-limit``, ``--zr-profile`` and ``--zr-report-dir``; pytest-xdist spreads the hosts
over workers (``--dist loadgroup``, one group per host, so a host's steps run one after the other on one SSH
connection) and pytest writes the JUnit XML. Each test records its verdict in its report's user_properties;
the controller gathers them into ``verify.json`` and renders ``verify.html`` from it (zrunbook/verify/report.py).

Before the workers start, the controller runs the preflight (``preflight``): on every host, in parallel, one
``pkcsconf -t`` that reads each token's slot and flags without logging in, and from that the PIN variables held
for the whole run (zrunbook/verify/pins.py). The findings go into the run's folder ``<report dir>/.run``, which
the workers read.
"""

from __future__ import annotations

import contextlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from zrunbook.verify import pins, report, target
from zrunbook.verify import profile as prof
from zrunbook.verify.steps import STEPS, applies, token_of


def pytest_addoption(parser):
    group = parser.getgroup("zrunbook verify")
    group.addoption("--zr-inventory", required=True, help="the Ansible inventory (file or directory)")
    group.addoption("--zr-limit", default=None, help="a group or host of the inventory (default: all)")
    group.addoption("--zr-profile", required=True, help="the site profile (TOML)")
    group.addoption("--zr-report-dir", default="build/verify", help="where verify.json and verify.html go")


def pytest_configure(config):
    config.zr_started = time.time()
    config.zr_run_dir = Path(config.getoption("zr_report_dir")) / ".run"
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) writes the reports
        config.pluginmanager.register(Reports(config), "zr-verify-reports")
        with contextlib.suppress(pytest.UsageError):  # said again, and stopped on, at collection
            preflight(config)


def _look(inventory_path: str, name: str) -> dict:
    try:
        host = target.connect(inventory_path, name)
        copies = target.installed(host)
        found, why = target.tokens(host)
    except (target.Unreachable, RuntimeError) as exc:
        return {"error": f"not checked: {exc}", "tokens": {}, "installed": {}}
    return {"error": why or None, "tokens": {label: {"slot": s.slot, "flags": s.flags} for label, s in found.items()},
            "installed": copies}


def preflight(config) -> None:
    """Every host's tokens (slot, flags) before any login, and the PIN variables no host may use in this run."""
    inventory, hosts, profile = _setup(config)
    guard = pins.Guard(config.zr_run_dir)
    guard.reset()
    needs = {}  # host -> [(token, uses its PIN)], for every host a step applies to
    for name in hosts:
        groups, hostvars = target.groups_of(inventory, name), target.hostvars_of(inventory, name)
        steps = [s for s in STEPS if applies(s, profile, groups) is None]
        if steps:  # a host a step applies to: its installed checks, and the tokens its steps use
            wanted = [(token_of(profile, s.part, hostvars)[0], bool(s.secrets)) for s in steps if "SLOT" in s.env]
            needs[name] = [(t, secret) for t, secret in wanted if t is not None]
    path = config.getoption("zr_inventory")
    with ThreadPoolExecutor(max_workers=max(1, min(len(needs), 8))) as pool:
        looked = dict(zip(needs, pool.map(lambda n: _look(path, n), needs), strict=True))
    held: dict[str, str] = {}
    for name in hosts:  # in inventory order, so the reason named is the first host's
        for token, secret in needs.get(name, []):
            state = looked[name]["tokens"].get(token.label)
            if secret and state and pins.doubtful(state["flags"]) and token.pin_env not in held:
                held[token.pin_env] = pins.describe(token.label, name, state["flags"])
    guard.write_preflight(looked, held)


def _setup(config) -> tuple[dict, list[str], prof.Profile]:
    if not hasattr(config, "zr_verify"):
        try:
            profile = prof.load(config.getoption("zr_profile"))
            inventory = target.read_inventory(config.getoption("zr_inventory"))
            hosts = target.select(inventory, config.getoption("zr_limit"))
        except (prof.ProfileError, target.InventoryError) as exc:
            raise pytest.UsageError(str(exc)) from None
        config.zr_verify = (inventory, hosts, profile)
    return config.zr_verify


def pytest_generate_tests(metafunc):
    if {"verify_host", "verify_step"} <= set(metafunc.fixturenames):
        inventory, hosts, _ = _setup(metafunc.config)
        params = [pytest.param(h, s, id=f"{h}::{s.id}", marks=pytest.mark.xdist_group(h)) for h in hosts for s in STEPS]
        metafunc.parametrize(("verify_host", "verify_step"), params)


@pytest.fixture(scope="session")
def verify_setup(request):
    return _setup(request.config)


@pytest.fixture(scope="session")
def verify_connections():
    return {}


class Reports:
    """In the controller: every test's verdict, then verify.json and verify.html."""

    def __init__(self, config):
        self.config = config
        self.rows: list[dict] = []

    def pytest_runtest_logreport(self, report):
        row = dict(report.user_properties).get("zr_verdict")
        if report.when != "call" or row is None:
            return
        row = dict(row)
        # A failed test whose verdict is neither "failed" nor "cannot tell" is an error in verify itself: a failure,
        # with its words. "cannot tell" fails the test too (so pytest's exit status counts it) and stays itself.
        if report.failed and row["verdict"] not in ("failed", "cannot tell"):
            row["verdict"], row["message"] = "failed", report.longreprtext.strip().splitlines()[-1][:500]
        self.rows.append(row)

    def pytest_sessionfinish(self, session):
        try:
            inventory, hosts, profile = _setup(self.config)
        except pytest.UsageError:
            return
        out = Path(self.config.getoption("zr_report_dir"))
        out.mkdir(parents=True, exist_ok=True)
        data = report.document(profile, self.config.getoption("zr_inventory"), hosts, self.rows,
                               time.time() - self.config.zr_started)
        (out / "verify.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        (out / "verify.html").write_text(report.html(data), encoding="utf-8")
