"""Benchmark of the one-change loop (checks/reuse.py): a plain `make check` after a whole run passed here.

Three cases, each RUNS times, every run a plain `make check` (the whole suite, verdicts reused where the inputs are
unchanged):

* nothing edited (target <= 20 s);
* one static snippet edited (STATIC_SNIPPET; target <= 60 s);
* one host snippet edited (HOST_SNIPPET; target <= 60 s).

An edit appends one comment line that differs in every run (so every run has an edit to judge), in the file's own
comment syntax; the file is restored afterwards and one more untimed run settles the results. For each run: the
wall time, pytest's own time, how many tests ran and how many verdicts were reused. Then the median, min and max
against the target, and the machine's load before and after each case.

    python3 zrunbook/bench_loop.py [RUNS]      (default 5; `make bench WHAT=loop` runs it)

Environment: STATIC_SNIPPET, HOST_SNIPPET (the snippets edited), CASES (default "nothing static host").

It needs a passing whole run first (build/results.json with every test's inputs: `make check`) and says so
otherwise. Stdlib only: it runs with any Python 3.11, outside the tox environment it measures.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "build" / "results.json"
CLOSING = re.compile(r"^=*\s*(\d+ (?:passed|failed|error).*) in ([\d.]+)s\b")
REUSED = re.compile(r"^reused: (\d+) verdicts")
COMMENT = {".clp": "-- {} --", ".sql": "-- {} --", ".xml": "<!-- {} -->", ".json": None}


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


LOGS = ROOT / "build" / "bench-loop"
# The host case: a host snippet with at most 25 tests (declared and observed: 24, four of them on a host).
# check-token-site-files.sh, the earlier default, has more and reaches a walkthrough state on s390x.
HOST_SNIPPET = "ihs/httpd/httpd-ssl-session-cache.conf"


def run_once(label: str) -> tuple[float, float, str, int]:
    """One plain `make check`: (wall s, pytest s, pytest's counts, reused), its output kept in build/bench-loop/
    (pytest's slowest durations say what ran longest). A failed run stops the benchmark."""
    t0 = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k not in ("ALL", "CI", "ZR_HOSTS", "SNIPPET", "CHECKS")}
    proc = subprocess.run(["make", "--no-print-directory", "check"], cwd=ROOT, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    LOGS.mkdir(parents=True, exist_ok=True)
    (LOGS / f"{label}.log").write_text(proc.stdout + proc.stderr)
    out = (proc.stdout + proc.stderr).splitlines()
    closing = [m for m in map(CLOSING.match, out) if m]
    reused = [int(m.group(1)) for m in map(REUSED.match, out) if m]
    if proc.returncode != 0 or not closing:
        sys.stderr.write("\n".join(out[-60:]) + "\n")
        sys.exit(f"make check failed (exit {proc.returncode}); no figure for this case.")
    return wall, float(closing[-1].group(2)), closing[-1].group(1), reused[-1] if reused else 0


def split() -> tuple[float, float]:
    """(when the last test that does not read the guide or the tree ended, when the last test ended), in seconds
    from the first test, from this run's build/check-timeline.tsv; the guide's tests are those whose recorded inputs
    carry a tree key (checks/reuse.py). (0, 0) when no test ran."""
    timeline = ROOT / "build" / "check-timeline.tsv"
    unseen = {t for t, e in json.loads(RESULTS.read_text()).get("inputs", {}).items() if e.get("unseen")}
    ends = [(row[3], float(row[1]) + float(row[2])) for row in
            (line.split("\t") for line in timeline.read_text().splitlines()[1:]) if len(row) == 4] \
        if timeline.is_file() else []
    own = [end for test, end in ends if test not in unseen]
    return max(own, default=0.0), max((end for _t, end in ends), default=0.0)


def edit(path: Path, n: int) -> None:
    """Append one comment line that no other run wrote, in the file's comment syntax."""
    form = COMMENT.get(path.suffix, "# {}")
    if form is None:
        sys.exit(f"{path.name}: a JSON file has no comment syntax; pick another snippet to edit")
    text = path.read_text()
    path.write_text(text + ("" if text.endswith("\n") else "\n") + form.format(f"bench_loop edit {n} {time.time_ns()}")
                    + "\n")


def case(name: str, runs: int, target: float, snippet: str | None) -> dict:
    path = ROOT / "snippets" / snippet if snippet else None
    original = path.read_bytes() if path else None
    print(f"{name}" + (f": snippets/{snippet}" if snippet else ""), flush=True)
    print(f"  load before: {loadavg()}")
    walls, pytests, ends = [], [], []
    try:
        for i in range(1, runs + 1):
            if path:
                edit(path, i)
            wall, own, counts, reused = run_once(f"{name.split()[0]}-{i}")
            walls.append(wall)
            pytests.append(own)
            others, last = split()
            ends.append((others, last))
            print(f"  run {i}: wall {wall:6.1f} s, pytest {own:6.1f} s; {counts}; reused {reused}; from the first "
                  f"test, the last not reading the guide ended at {others:.1f} s, the last at {last:.1f} s",
                  flush=True)
    finally:
        if path:
            path.write_bytes(original)
    print(f"  load after:  {loadavg()}")
    med = statistics.median(walls)
    print(f"  wall median {med:.1f} s, min {min(walls):.1f}, max {max(walls):.1f}, spread {max(walls) - min(walls):.1f}"
          f" (target <= {target:g} s: {'ok' if med <= target else 'OVER TARGET'})", flush=True)
    if path:
        # the file restored: settle the results for the next case
        wall, own, counts, reused = run_once(f"{name.split()[0]}-settle")
        print(f"  restored and settled: wall {wall:.1f} s; {counts}; reused {reused}", flush=True)
    return {"case": name, "snippet": snippet, "walls": walls, "pytest": pytests, "target": target,
            "ends": ends}


def main(argv: list[str]) -> int:
    runs = int(argv[1]) if len(argv) > 1 else 5
    if not RESULTS.is_file() or not json.loads(RESULTS.read_text()).get("inputs"):
        sys.exit("no recorded run here: run a whole `make check` first, then this benchmark measures the loop after it")
    wall, _, counts, reused = run_once("settle")
    print(f"settling run: wall {wall:.1f} s; {counts}; reused {reused}", flush=True)
    cases = {"nothing": ("nothing edited", None),
             "static": ("static snippet edited", os.environ.get("STATIC_SNIPPET",
                                                                "db2/tuning/autoconfigure-tradedb.clp")),
             "host": ("host snippet edited", os.environ.get("HOST_SNIPPET", HOST_SNIPPET))}
    wanted = os.environ.get("CASES", "nothing static host").split()
    found = [case(cases[c][0], runs, 20 if c == "nothing" else 60, cases[c][1]) for c in wanted]
    out = ROOT / "build" / "bench-loop.json"
    out.write_text(json.dumps(found, indent=1) + "\n")
    print(f"written: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
