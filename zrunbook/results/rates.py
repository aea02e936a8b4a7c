"""What the rate benches (make bench WHAT=token, liberty, pq) share: one row of runs in handshakes per server
CPU-second, its checks, and writing new rows into a data file beside the rows of what was not measured again.

``summary(rates)``: runs, median, min, max and spread of a list of rates, as the data files write them.
``rate_problems(where, row, min_runs)``: what is wrong with one such row; ``checked_rows`` those of a whole file.
``merge(path, columns, new, key, order)``: new rows into path, keeping every row whose ``key`` the new rows do not
measure.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable
from pathlib import Path

from zrunbook.facts import measured, rows

UNIT = "full handshakes per server CPU-second"


def summary(rates: list[float]) -> dict:
    median = statistics.median(rates)
    return {"runs": len(rates), "median": f"{median:.1f}", "min": f"{min(rates):.1f}", "max": f"{max(rates):.1f}",
            "spread_percent": f"{100 * (max(rates) - min(rates)) / median:.1f}"}


def rate_problems(where: str, r: dict, min_runs: int) -> list[str]:
    out = []
    if r["unit"] != UNIT:
        out.append(f"{where}: the unit must be '{UNIT}'")
    if int(r["runs"]) < min_runs:
        out.append(f"{where}: {r['runs']} run(s); at least {min_runs} are needed for a median and a spread")
    low, median, high = float(r["min"]), float(r["median"]), float(r["max"])
    if not 0 < low <= median <= high:
        out.append(f"{where}: the median {median} must lie between the lowest {low} and the highest {high} run")
    elif abs(100 * (high - low) / median - float(r["spread_percent"])) > 0.15:
        out.append(f"{where}: spread_percent {r['spread_percent']} is not (max - min) / median")
    return out


def checked_rows(path: Path, columns: list[str], min_runs: int,
                 name: Callable[[dict], str]) -> tuple[list[dict], list[str]]:
    """A data file's rows and the rate problems of each (named by ``name(row)``), or no rows and the one problem
    that stops reading it."""
    data, problems = measured(path, columns)
    if problems:
        return [], problems
    return data, [p for r in data for p in rate_problems(f"{path.name}: {name(r)}", r, min_runs)]


def merge(path: Path, columns: list[str], new: list[dict], key: Callable[[dict], tuple],
          order: Callable[[dict], tuple]) -> None:
    done = {key(r) for r in new}
    kept = [r for r in rows(path) if key(r) not in done] if path.exists() else []
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, columns, lineterminator="\n")
        w.writeheader()
        w.writerows(sorted(kept + new, key=order))
