"""Time each chapter's walkthrough on each host: the walkthrough tests run RUNS times (default 3) with the
clean-host states warm (the first run makes any that are missing, and is timed too), each test's call time read
from pytest's JUnit report; prints median, min and max per test and the whole run's wall time.

    python3 -m zrunbook.bench_walk [RUNS]      (`make bench WHAT=walk` runs it inside the check environment)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from zrunbook import ROOT

TESTS = "checks/walkthrough/test_walkthroughs.py"


def one_run(report: Path) -> tuple[float, dict[str, float]]:
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
                           f"--junitxml={report}", TESTS], cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if done.returncode != 0:
        sys.exit(f"a walkthrough failed; nothing measured:\n{done.stdout[-3000:]}")
    times = {case.get("name"): float(case.get("time")) for case in ET.parse(report).iter("testcase")
             if "[" in case.get("name", "")}
    return wall, times


def main(runs: int) -> None:
    walls, per_test = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(runs):
            wall, times = one_run(Path(tmp) / f"run{n}.xml")
            walls.append(wall)
            for name, seconds in times.items():
                per_test.setdefault(name, []).append(seconds)
            print(f"run {n + 1}: {wall:.1f} s wall", flush=True)
    print(f"{'walkthrough (test, host)':<95} median    min    max  (s, setup + call + teardown)")
    for name in sorted(per_test):
        values = per_test[name]
        print(f"{name.removeprefix('test_the_'):<95} {statistics.median(values):6.1f} {min(values):6.1f} "
              f"{max(values):6.1f}")
    print(f"whole module, 2 workers: median {statistics.median(walls):.1f} s, {min(walls):.1f}-{max(walls):.1f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
