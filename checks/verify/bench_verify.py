"""make bench WHAT=verify: ``make verify`` against 1, 2, 4 and 8 good container targets on this machine, 3 runs each.

Not part of `make check` (the file name does not start with test_). The 8 targets (amd64, the Apache token site,
no warm-up: the page's configuration serves its first handshakes) are started once; for each count an inventory
of the first N is written and ``python -m zrunbook verify`` runs as a user runs it, with its default workers (one
per host, at most 8). Writes snippets/results/verify/debian13-amd64-scaling.csv (zrunbook/verify/bench.py) and
prints the medians.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks.hosts import apache
from checks.hosts import engine as eng
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.ssh_targets import Fleet
from checks.hosts.token import PINS
from zrunbook import ROOT, SNIPPETS
from zrunbook.verify import bench

HOST = "debian13-amd64"
OUT = SNIPPETS / "results/verify" / f"{HOST}-scaling.csv"
PROFILE = SNIPPETS / "verify/site-profile.toml"

@pytest.mark.parametrize("name", [HOST])
def test_verify_scaling(name, zr_host_pool, tmp_path):
    fleet = Fleet(eng.Engine.detect().cli, Path("/tmp") / f"zrv-bench-{os.getpid()}")
    hosts = []
    try:
        for i in range(max(bench.TARGETS)):
            host = zr_host_pool.start(name, state=TOKEN_KEY)
            hosts.append(host)
            ca = apache.serve_token(host)
            host.run_expect([0], f"install -m 644 {ca} /etc/ssl/certs/zrunbook-site-ca.pem")
            fleet.add(host, f"web{i + 1}")
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               "TOKEN_USER_PIN": PINS["TOKEN_USER_PIN"]}
        rows = []
        for n in bench.TARGETS:
            inventory = fleet.inventory({"webservers": [f"web{i + 1}" for i in range(n)]}, tmp_path / f"inv{n}.yml")
            for run in range(1, bench.MIN_RUNS + 1):
                out = tmp_path / f"r{n}-{run}"
                started = time.monotonic()
                done = subprocess.run([sys.executable, "-m", "zrunbook", "verify", "--inventory", str(inventory),
                                       "--profile", str(PROFILE), "--out", str(out)], env=env, cwd=ROOT,
                                      capture_output=True, text=True, check=False)
                wall = time.monotonic() - started
                fleet.close_connections()

                data = json.loads((out / "verify.json").read_text(encoding="utf-8"))
                assert done.returncode == 0, done.stdout[-2000:]
                rows.append({"targets": n, "run": run, "workers": min(n, 8), "wall_s": f"{wall:.2f}",
                             "per_host_s": f"{wall / n:.2f}", "steps_passed": data["totals"]["passed"]})
                print(f"{n} target(s), run {run}: {wall:.1f} s")
        OUT.parent.mkdir(parents=True, exist_ok=True)
        with OUT.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=bench.COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        assert bench.file_problems(OUT) == []
        for n, s in bench.summary(OUT).items():
            print(f"{n} target(s): median {s['wall']:.1f} s, per host {s['per_host']:.2f} s, spread {s['spread']:.0%}")
    finally:
        for host in hosts:
            zr_host_pool.remove(host)
        shutil.rmtree(fleet.directory, ignore_errors=True)
