"""Benchmark of a one-snippet recheck: `make check SNIPPET=...`, warm, for a static snippet and an amd64
host snippet. For each run: the wall time, pytest's own time (its closing line) and the difference, the
overhead (make, the set-up probe, tox, ruff, Python and pytest starting). First the set-up probe alone
(`make html|pdf|check` run it first; target <= 1 s). Prints each run and the median, min and max, against
the targets, and the machine's load before and after each case.

    python3 zrunbook/bench_snippet.py [RUNS]      (default 5; `make bench WHAT=snippet` runs it)

Environment: STATIC_SNIPPET, HOST_SNIPPET (the snippets timed), BENCH_HOST (default debian13-amd64).
Stdlib only: it runs with any Python 3.11, outside the tox environment it measures.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# pytest's closing line, e.g. "3 passed, 402 deselected in 2.31s" or "... in 65.32s (0:01:05)".
CLOSING = re.compile(r"^=*\s*\d+ (?:passed|failed|skipped|deselected|error|xfailed|xpassed)\b.* in ([\d.]+)s\b")
OVERHEAD_TARGET = 3.0


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run_once(snippet: str, env: dict[str, str]) -> tuple[float, float]:
    """One `make check SNIPPET=...`: (wall seconds, pytest's seconds). A failed run stops the benchmark."""
    t0 = time.monotonic()
    proc = subprocess.run(["make", "--no-print-directory", "check", f"SNIPPET={snippet}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    closing = [m for m in map(CLOSING.match, out.splitlines()) if m]
    if proc.returncode != 0 or not closing:
        sys.stderr.write(out[-4000:])
        sys.exit(f"make check SNIPPET={snippet} failed (exit {proc.returncode}); no figure for it.")
    return wall, float(closing[-1].group(1))


def summary(label: str, values: list[float], target: float) -> str:
    median = statistics.median(values)
    verdict = "ok" if median <= target else "OVER TARGET"
    return (f"  {label:<9} median {median:5.2f} s, min {min(values):5.2f}, max {max(values):5.2f}"
            f"  (target <= {target:g} s: {verdict})")


def bench(name: str, snippet: str, runs: int, total_target: float, hosts: str = "") -> None:
    env = {k: v for k, v in os.environ.items() if k != "ZR_HOSTS"}
    if hosts:
        env["ZR_HOSTS"] = hosts
    print(f"{name}: make check SNIPPET={snippet}" + (f" ZR_HOSTS={hosts}" if hosts else ""))
    print(f"  load before: {loadavg()}")
    run_once(snippet, env)  # warm: the tox environment, the container image, the file cache
    walls, pytests = [], []
    for i in range(1, runs + 1):
        wall, own = run_once(snippet, env)
        walls.append(wall)
        pytests.append(own)
        print(f"  run {i}: wall {wall:5.2f} s, pytest {own:5.2f} s, overhead {wall - own:5.2f} s", flush=True)
    print(f"  load after:  {loadavg()}")
    print(summary("wall", walls, total_target))
    print(summary("pytest", pytests, total_target))
    print(summary("overhead", [w - p for w, p in zip(walls, pytests, strict=True)], OVERHEAD_TARGET), flush=True)


def bench_probe(runs: int) -> None:
    """The set-up probe each make target runs first (.ci/prereqs.sh --make PURPOSE), nothing missing."""
    print(f"set-up probe: bash .ci/prereqs.sh --make PURPOSE\n  load before: {loadavg()}")
    for purpose in ("html", "pdf", "check"):
        times = []
        for _ in range(runs):
            t0 = time.monotonic()
            proc = subprocess.run(["bash", ".ci/prereqs.sh", "--make", purpose], cwd=ROOT, capture_output=True,
                                  text=True, stdin=subprocess.DEVNULL)
            times.append(time.monotonic() - t0)
            if proc.returncode != 0 or proc.stdout or proc.stderr:
                sys.exit(f"the {purpose} probe found something missing: {proc.stdout}{proc.stderr}")
        print(summary(purpose, times, 1))


def main(argv: list[str]) -> int:
    runs = int(argv[1]) if len(argv) > 1 else 5
    bench_probe(runs)
    bench("static snippet", os.environ.get("STATIC_SNIPPET", "db2/tuning/autoconfigure-tradedb.clp"), runs, 5)
    bench("amd64 host snippet", os.environ.get("HOST_SNIPPET", "crypto/token/init-token.sh"), runs, 20,
          hosts=os.environ.get("BENCH_HOST", "debian13-amd64"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
