"""What the token costs Apache httpd: make bench WHAT=token's data (checks/ihs/bench_apache_token.py writes it).

``snippets/results/measured/token-cost.csv``: per host, key type and place of the key (``token`` or ``file``), the
median, lowest and highest of the runs in full TLS handshakes per server CPU-second. ``file_problems`` is the
bench-token checker's validator; ``ratio_sentence`` and ``goal_sentence`` are what the results page states.
"""

from __future__ import annotations

import csv
from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook.facts import rows

DATA = SNIPPETS / "results" / "measured" / "token-cost.csv"
COLUMNS = ["host", "key", "key_in", "runs", "handshakes_per_run", "median", "min", "max", "spread_percent", "unit"]
UNIT = "full handshakes per server CPU-second"
MIN_RUNS = 3
GOAL = 0.90  # issue 35: on amd64 the token path at least 90 % of the file path
KEY_NAMES = {"rsa2048": "RSA 2048", "ecdsa-p256": "ECDSA P-256"}


def file_problems(path: Path) -> list[str]:
    try:
        data = rows(path)
    except (OSError, csv.Error) as exc:
        return [f"{path.name}: cannot read: {exc}"]
    if not data or list(data[0]) != COLUMNS:
        return [f"{path.name}: the columns must be {', '.join(COLUMNS)}"]
    out = []
    for r in data:
        where = f"{path.name}: {r['host']} {r['key']} key in {r['key_in']}"
        if r["key_in"] not in ("token", "file"):
            out.append(f"{where}: key_in must be token or file")
        if r["unit"] != UNIT:
            out.append(f"{where}: the unit must be '{UNIT}'")
        if int(r["runs"]) < MIN_RUNS:
            out.append(f"{where}: {r['runs']} run(s); at least {MIN_RUNS} are needed for a median and a spread")
        low, median, high = float(r["min"]), float(r["median"]), float(r["max"])
        if not 0 < low <= median <= high:
            out.append(f"{where}: the median {median} must lie between the lowest {low} and the highest {high} run")
        elif abs(100 * (high - low) / median - float(r["spread_percent"])) > 0.15:
            out.append(f"{where}: spread_percent {r['spread_percent']} is not (max - min) / median")
    pairs = {(r["host"], r["key"]) for r in data}
    for host, key in sorted(pairs):
        places = {r["key_in"] for r in data if (r["host"], r["key"]) == (host, key)}
        if places != {"token", "file"}:
            out.append(f"{path.name}: {host} {key}: a token figure needs its file figure beside it "
                       f"(has {sorted(places)})")
    return out


def figures(path: Path = DATA) -> dict[tuple[str, str], dict[str, dict]]:
    """(host, key) -> {"token": row, "file": row}."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows(path):
        out.setdefault((r["host"], r["key"]), {})[r["key_in"]] = r
    return out


def ratio(pair: dict[str, dict]) -> float:
    return float(pair["token"]["median"]) / float(pair["file"]["median"])


def ratio_sentence(path: Path = DATA) -> str:
    parts = []
    for (host, key), pair in sorted(figures(path).items()):
        t, f = pair["token"], pair["file"]

        def runs(r: dict) -> str:
            return f"{float(r['median']):.0f}, runs {float(r['min']):.0f} to {float(r['max']):.0f}"

        parts.append(f"on {host} with {KEY_NAMES.get(key, key)}, {100 * ratio(pair):.0f} % "
                     f"(token {runs(t)}; file {runs(f)})")
    return "; ".join(parts)


def goal_sentence(path: Path = DATA) -> str:
    amd = {key: ratio(pair) for (host, key), pair in figures(path).items() if host.endswith("amd64")}
    missed = sorted(KEY_NAMES.get(k, k) for k, v in amd.items() if v < GOAL)
    if not amd:
        return "was not measured on amd64"
    if not missed:
        return f"was met for every key type (at least {100 * GOAL:.0f} %)"
    return f"was not met for {' and '.join(missed)}"
