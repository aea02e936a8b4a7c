"""What the hybrid post-quantum group costs a TLS server: make bench WHAT=pq's data (checks/ihs/bench_apache_pq.py).

``snippets/results/measured/pq-handshake-cost.csv``: per host, server and key-exchange group offered by the client
(``X25519MLKEM768`` or ``X25519``), the median, lowest and highest of the runs in full TLS 1.3 handshakes per server
CPU-second, against the token site. ``file_problems`` is the bench-pq checker's validator; ``ratio_sentence`` is what
the post-quantum page states.
"""

from __future__ import annotations

from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook.facts import rows
from zrunbook.results import rates as rate_rows

DATA = SNIPPETS / "results" / "measured" / "pq-handshake-cost.csv"
COLUMNS = ["host", "server", "group", "runs", "handshakes_per_run", "median", "min", "max", "spread_percent", "unit"]
UNIT = rate_rows.UNIT
MIN_RUNS = 3
HYBRID, CLASSICAL = "X25519MLKEM768", "X25519"


def file_problems(path: Path) -> list[str]:
    data, out = rate_rows.checked_rows(path, COLUMNS, MIN_RUNS, lambda r: f"{r['host']} {r['server']} {r['group']}")
    out += [f"{path.name}: {r['host']} {r['server']} {r['group']}: group must be {HYBRID} or {CLASSICAL}"
            for r in data if r["group"] not in (HYBRID, CLASSICAL)]
    for host, server in sorted({(r["host"], r["server"]) for r in data}):
        groups = {r["group"] for r in data if (r["host"], r["server"]) == (host, server)}
        if groups != {HYBRID, CLASSICAL}:
            out.append(f"{path.name}: {host} {server}: a {HYBRID} figure needs its {CLASSICAL} figure beside it "
                       f"(has {sorted(groups)})")
    return out


def row(host: str, server: str, group: str, per_run: int, rates: list[float]) -> dict:
    return {"host": host, "server": server, "group": group, "handshakes_per_run": per_run,
            **rate_rows.summary(rates), "unit": UNIT}


def merge(path: Path, new: list[dict]) -> None:
    """Write new rows into path, keeping the rows of every (host, server) the new rows do not measure."""
    rate_rows.merge(path, COLUMNS, new, key=lambda r: (r["host"], r["server"]),
                    order=lambda r: (r["host"], r["server"], r["group"]))


def figures(path: Path = DATA) -> dict[tuple[str, str], dict[str, dict]]:
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for r in rows(path):
        out.setdefault((r["host"], r["server"]), {})[r["group"]] = r
    return out


def ratio_sentence(path: Path = DATA) -> str:
    parts = []
    for (host, _server), pair in sorted(figures(path).items()):
        h, c = pair[HYBRID], pair[CLASSICAL]

        def runs(r: dict) -> str:
            return f"median {float(r['median']):.0f}, runs {float(r['min']):.0f} to {float(r['max']):.0f}"

        overlap = float(h["min"]) <= float(c["max"]) and float(c["min"]) <= float(h["max"])
        parts.append(f"on {host}, {100 * float(h['median']) / float(c['median']):.0f} % "
                     f"({HYBRID} {runs(h)}; {CLASSICAL} {runs(c)}; the runs "
                     f"{'overlap' if overlap else 'do not overlap'})")
    return "; ".join(parts)
