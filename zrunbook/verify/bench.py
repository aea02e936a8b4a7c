"""make bench WHAT=verify's data: ``make verify`` against 1, 2, 4 and 8 container targets, three runs each.

The CSV (snippets/results/verify/<host>-scaling.csv) has one row per run: ``targets, run, workers, wall_s,
per_host_s, steps_passed``. ``wall_s`` is the whole command as a user runs it (``python -m zrunbook verify``:
the inventory read, pytest and its xdist workers started, every host's steps, the reports written);
``per_host_s`` is wall_s / targets. ``file_problems`` is the bench-verify checker (zrunbook/checkers.toml);
``summary(path)`` gives per target count the median and spread ((max - min) / median) the page quotes.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

from zrunbook.facts import measured

COLUMNS = ["targets", "run", "workers", "wall_s", "per_host_s", "steps_passed"]
TARGETS = (1, 2, 4, 8)
MIN_RUNS = 3


def rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def file_problems(path: Path) -> list[str]:
    data, problems = measured(path, COLUMNS)
    if problems:
        return problems
    out = []
    for n in TARGETS:
        runs = [r for r in data if r["targets"] == str(n)]
        if len(runs) < MIN_RUNS:
            out.append(f"{path.name}: {len(runs)} run(s) with {n} target(s); at least {MIN_RUNS} are needed for a "
                       "median and a spread")
        for r in runs:
            wall, per = float(r["wall_s"]), float(r["per_host_s"])
            if wall <= 0 or abs(per - wall / n) > 0.051:
                out.append(f"{path.name}: run {r['run']} with {n} target(s): per_host_s {per} is not wall_s / {n}")
            if int(r["steps_passed"]) != 3 * n:
                out.append(f"{path.name}: run {r['run']} with {n} target(s): {r['steps_passed']} steps passed, "
                           f"not {3 * n}: a run with a failing step is not a measurement of verify")
    return out


def summary(path: Path) -> dict[int, dict[str, float]]:
    out = {}
    for n in TARGETS:
        walls = [float(r["wall_s"]) for r in rows(path) if r["targets"] == str(n)]
        median = statistics.median(walls)
        out[n] = {"wall": median, "per_host": median / n, "spread": (max(walls) - min(walls)) / median,
                  "runs": len(walls), "workers": int(next(r["workers"] for r in rows(path) if r["targets"] == str(n)))}
    return out
