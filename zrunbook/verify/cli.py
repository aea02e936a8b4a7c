"""``python -m zrunbook verify``: the runbook's read-only checks against the hosts of an Ansible inventory.

    python -m zrunbook verify --inventory hosts.yml --profile site.toml [--limit GROUP] [--out DIR] [--workers N]

Runs pytest with zrunbook/verify/plugin.py over zrunbook/verify/fleet.py, one xdist worker per host up to
``--workers`` (default: the number of hosts, at most 8; the work is on the hosts, not here), and writes
``verify.json``, ``verify.html`` and ``verify.xml`` (JUnit) into ``--out`` (default build/verify). Exit status:
0 when no step failed, 1 when one did, 2 for bad input (the profile, the inventory, LIMIT).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from zrunbook.verify import profile as prof
from zrunbook.verify import target

HERE = Path(__file__).resolve().parent
MAX_WORKERS = 8


def pytest_command(inventory: str, profile: str, limit: str | None, out: str, workers: int) -> list[str]:
    return [sys.executable, "-m", "pytest", "-c", str(HERE / "pytest.ini"), "--rootdir", str(HERE),
            "-p", "zrunbook.verify.plugin", str(HERE / "fleet.py"), "-q", "-rfs", "--tb=line",
            "-n", str(workers), "--dist", "loadgroup", f"--junitxml={Path(out) / 'verify.xml'}",
            "-o", "junit_family=xunit2", "--zr-inventory", inventory, "--zr-profile", profile, "--zr-report-dir", out,
            *(["--zr-limit", limit] if limit else [])]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m zrunbook verify", description=__doc__.split("\n\n")[0])
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--limit", default=None)
    parser.add_argument("--out", default="build/verify")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    try:  # the bad-input sentences come before pytest starts
        prof.load(args.profile)
        hosts = target.select(target.read_inventory(args.inventory), args.limit)
    except (prof.ProfileError, target.InventoryError) as exc:
        print(f"zrunbook verify: {exc}", file=sys.stderr)
        return said(2)
    workers = args.workers or min(len(hosts), MAX_WORKERS)
    target.tools_on_path()  # the pytest run's workers find ansible-inventory without the caller's PATH
    Path(args.out).mkdir(parents=True, exist_ok=True)
    done = subprocess.run(pytest_command(args.inventory, args.profile, args.limit, args.out, workers), check=False)
    print(f"zrunbook verify: reports in {args.out}/verify.html, verify.json, verify.xml")
    return said(0 if done.returncode == 0 else 1)


STATUS = {0: "every step passed or did not apply", 1: "a step failed or could not tell", 2: "bad input"}


def said(status: int) -> int:
    """The exit status, also as the last line: make reports every failed recipe as 2 (GNU make has no other
    failure status), so the line is how a job run through make tells a failed step from bad input."""
    print(f"zrunbook verify: exit status {status} ({STATUS[status]})", file=sys.stderr)
    return status
