"""What the token costs a TLS server: make bench WHAT=token's data (Apache httpd, checks/ihs/bench_apache_token.py)
and make bench WHAT=liberty's (Open Liberty, checks/was/bench_liberty.py), in one file.

``snippets/results/measured/token-cost.csv``: per host, server, key type and place of the key (``token`` or
``file``), the median, lowest and highest of the runs in full TLS handshakes per server CPU-second.
``file_problems`` is the bench-token checker's validator; ``ratio_sentence`` and ``goal_sentence`` are what the
results page states.
"""

from __future__ import annotations

from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook.facts import rows
from zrunbook.results import rates as rate_rows

DATA = SNIPPETS / "results" / "measured" / "token-cost.csv"
COLUMNS = ["host", "server", "key", "key_in", "runs", "handshakes_per_run", "median", "min", "max", "spread_percent",
           "unit"]
UNIT = rate_rows.UNIT
MIN_RUNS = 3
GOAL = 0.90  # issue 35: on amd64 the token path at least 90 % of the file path
KEY_NAMES = {"rsa2048": "RSA 2048", "ecdsa-p256": "ECDSA P-256"}
SERVER_NAMES = {"apache": "Apache httpd", "liberty": "Open Liberty"}


def file_problems(path: Path) -> list[str]:
    data, out = rate_rows.checked_rows(path, COLUMNS, MIN_RUNS,
                                       lambda r: f"{r['host']} {r['server']} {r['key']} key in {r['key_in']}")
    out += [f"{path.name}: {r['host']} {r['server']} {r['key']} key in {r['key_in']}: key_in must be token or file"
            for r in data if r["key_in"] not in ("token", "file")]
    pairs = {(r["host"], r["server"], r["key"]) for r in data}
    for host, server, key in sorted(pairs):
        places = {r["key_in"] for r in data if (r["host"], r["server"], r["key"]) == (host, server, key)}
        if places != {"token", "file"}:
            out.append(f"{path.name}: {host} {server} {key}: a token figure needs its file figure beside it "
                       f"(has {sorted(places)})")
    return out


def figures(path: Path = DATA) -> dict[tuple[str, str, str], dict[str, dict]]:
    """(host, server, key) -> {"token": row, "file": row}."""
    out: dict[tuple[str, str, str], dict[str, dict]] = {}
    for r in rows(path):
        out.setdefault((r["host"], r["server"], r["key"]), {})[r["key_in"]] = r
    return out


def label(host: str, server: str, key: str) -> str:
    return f"{SERVER_NAMES.get(server, server)} on {host} with {KEY_NAMES.get(key, key)}"


def merge(path: Path, new: list[dict]) -> None:
    """Write new rows into path, keeping the rows of every (host, server) the new rows do not measure."""
    rate_rows.merge(path, COLUMNS, new, key=lambda r: (r["host"], r["server"]),
                    order=lambda r: (r["host"], r["server"], r["key"], r["key_in"]))


def row(host: str, server: str, key: str, key_in: str, per_run: int, rates: list[float]) -> dict:
    return {"host": host, "server": server, "key": key, "key_in": key_in, "handshakes_per_run": per_run,
            **rate_rows.summary(rates), "unit": UNIT}


def ratio(pair: dict[str, dict]) -> float:
    return float(pair["token"]["median"]) / float(pair["file"]["median"])


def ratio_sentence(path: Path = DATA) -> str:
    parts = []
    for (host, server, key), pair in sorted(figures(path).items()):
        t, f = pair["token"], pair["file"]

        def runs(r: dict) -> str:
            return f"{float(r['median']):.0f}, runs {float(r['min']):.0f} to {float(r['max']):.0f}"

        parts.append(f"{label(host, server, key)}, {100 * ratio(pair):.0f} % "
                     f"(token {runs(t)}; file {runs(f)})")
    return "; ".join(parts)


def goal_sentence(path: Path = DATA) -> str:
    amd = {(server, key): ratio(pair) for (host, server, key), pair in figures(path).items() if host.endswith("amd64")}
    missed = sorted(f"{SERVER_NAMES.get(s, s)} with {KEY_NAMES.get(k, k)}" for (s, k), v in amd.items() if v < GOAL)
    if not amd:
        return "was not measured on amd64"
    if not missed:
        return f"was met for every server and key type (at least {100 * GOAL:.0f} %)"
    return f"was not met for {' and '.join(missed)}"
