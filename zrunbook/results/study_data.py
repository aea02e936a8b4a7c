"""Validator for the studies' results transcribed under ``snippets/results/studies/``.

``validate(path)`` returns a list of problems (empty when the file is sound). Three shapes:

* statement files (``was-2013-daytrader.csv``, ``webseal-2007.csv``, ``jsse-cex2a.csv``): one row per result
  a study states, most of them ratios given only in words. Columns, units, qualifiers and numeric ranges
  are checked; a percentage or multiple in the ``statement`` must match ``value``; results stated twice
  must agree; shares of an increase must add up to 100 %; products of ratios the text chains must hold;
  counts that a table splits must add up. A disagreement the study itself contains is accepted only when
  one of the rows involved says so in its ``errata`` column (that is how the errata page finds them).
* the CICS TG transaction tables (``cics-tg-2015-tps.csv``): every table complete (100 to 600 clients),
  no more than 2 transactions per second per client (the workload's ceiling), SSL never above TCP.
* the WebSEAL CEX2C queue histogram (``webseal-2007-cex2c-queue.csv``): its average must be the 2.88
  the study states.

Every row needs a ``section`` and a ``source`` that passes the facts tables' source rule
(zrunbook/facts.py: an https URL, a document id in facts/documents.csv or a project file).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from zrunbook.facts import read_csv, source_problems

STATEMENT_COLUMNS = ["id", "scenario", "metric", "setup", "baseline", "value", "value_high", "unit", "qualifier",
                     "kind", "statement", "section", "source", "errata"]
UNITS = {  # unit -> (lowest, highest) accepted value
    "ratio to baseline": (0.01, 10.0),
    "share of the increase": (0.0, 1.0),
    "IFLs busy of 4": (0.0, 4.0),
    "ms": (0.0, 10_000.0),
    "percent": (0.0, 100.0),
    "operations": (0.0, 1e9),
    "requests": (0.0, 8.0),  # the zcrypt pending queue holds at most 8
}
QUALIFIERS = {"about", "almost", "more than", "below", "over", "up to", "exactly"}
KINDS = {"ratio in words", "value in words", "stated value", "table"}
LOWER = re.compile(r"\b(falls|fall|shorter|below|costs|loses|saves|halves)\b")
MULTIPLES = {"doubles": 2, "double": 2, "twice": 2, "triples": 3, "three times": 3, "four times": 4,
             "five times": 5, "six times": 6, "sextuples": 6, "factor of two": 2, "factor of six": 6,
             "factor of 2.4": 2.4, "nearly halves": 0.5}

# value(a) * value(b) must equal value(c): ratios the text chains (WebSEAL: SSL cost, then CPACF gain).
CHAINS = {"webseal-2007.csv": [("ssl-sw-vs-tcp-5.8k", "ssl-hw-vs-sw-5.8k", "ssl-hw-vs-tcp-5.8k")]}
# sum of the parts must equal the total
SUMS = {"webseal-2007.csv": [(("auth-cex2c-card1", "auth-cex2c-card2"), "auth-cex2c-operations")]}
QUEUE_AVERAGE = ("webseal-2007.csv", "auth-cex2c-queue-average")
CICS_COLUMNS = ["scenario", "payload", "protocol", "clients", "value", "unit", "section", "source"]
QUEUE_COLUMNS = ["pending_queue_length", "frequency", "unit", "section", "source"]


read = read_csv  # header and rows


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _source_problems(where: str, row: dict) -> list[str]:
    problems = [] if (row.get("section") or "").strip() else [f"{where}: no source section"]
    src = (row.get("source") or "").strip()
    if not src:
        return problems + [f"{where}: no source"]
    return problems + [f"{where}: {p}" for p in source_problems(src)]


def stated_number(statement: str, unit: str) -> float | None:
    """The value a statement's words give, in the row's unit, or None when the words give none."""
    pct = re.search(r"(\d+(?:\.\d+)?) %", statement)
    if pct:
        p = float(pct.group(1))
        if unit == "percent":
            return p
        if unit == "share of the increase":
            return p / 100
        if unit == "ratio to baseline":
            return 1 - p / 100 if LOWER.search(statement) else 1 + p / 100
        return None
    if unit == "share of the increase" and "half" in statement:
        return 0.5
    for words, factor in MULTIPLES.items():
        if words in statement and unit == "ratio to baseline":
            return 1 / factor if LOWER.search(statement) and factor > 1 else factor
    return None


def _close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def _statement_file(path: Path, fields: list[str], rows: list[dict]) -> list[str]:
    problems = []
    if fields != STATEMENT_COLUMNS and fields != STATEMENT_COLUMNS[:5] + ["key_bits"] + STATEMENT_COLUMNS[5:] \
            and fields != STATEMENT_COLUMNS[:5] + ["payload"] + STATEMENT_COLUMNS[5:]:
        return [f"{path.name}: columns {fields}; expected {STATEMENT_COLUMNS} with key_bits or payload after baseline"]
    by_id: dict[str, dict] = {}
    for n, row in enumerate(rows, start=2):
        where = f"{path.name}:{n} ({row.get('id')})"
        if row["id"] in by_id:
            problems.append(f"{where}: id used twice")
        by_id[row["id"]] = row
        problems += _source_problems(where, row)
        unit, value, high = row["unit"], _number(row["value"]), _number(row["value_high"])
        if unit not in UNITS:
            problems.append(f"{where}: unit {unit!r} is not one of {sorted(UNITS)}")
            continue
        if value is None:
            problems.append(f"{where}: value {row['value']!r} is not a number")
            continue
        low, top = UNITS[unit]
        for v in (value, high):
            if v is not None and not low <= v <= top:
                problems.append(f"{where}: {v:g} is outside {low:g} to {top:g} for {unit}")
        if high is not None and high < value:
            problems.append(f"{where}: value_high {high:g} is below value {value:g}")
        if row["qualifier"] not in QUALIFIERS:
            problems.append(f"{where}: qualifier {row['qualifier']!r} is not one of {sorted(QUALIFIERS)}")
        if row["kind"] not in KINDS:
            problems.append(f"{where}: kind {row['kind']!r} is not one of {sorted(KINDS)}")
        if unit == "ratio to baseline" and not row["baseline"]:
            problems.append(f"{where}: a ratio without a baseline")
        if "key_bits" in row and row["key_bits"] not in ("2048", "4096"):
            problems.append(f"{where}: key_bits {row['key_bits']!r} is not 2048 or 4096")
        words = stated_number(row["statement"], unit)
        if words is not None and not _close(words, value, 0.02):
            problems.append(f"{where}: the statement {row['statement']!r} says {words:g}, the value is {value:g}")
    problems += _cross_checks(path, rows, by_id)
    return problems


def _errata(*rows: dict) -> bool:
    return any((r.get("errata") or "").strip() for r in rows)


def _cross_checks(path: Path, rows: list[dict], by_id: dict[str, dict]) -> list[str]:
    problems = []
    scope = "key_bits" if rows and "key_bits" in rows[0] else "payload"
    # the same result stated twice must agree (ranges may overlap), unless the study's conflict is noted
    groups = defaultdict(list)
    for r in rows:
        if _number(r["value"]) is not None:
            groups[(r["scenario"], r["metric"], r["setup"], r["baseline"], r[scope], r["unit"])].append(r)
    for group in groups.values():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                a_lo, b_lo = float(a["value"]), float(b["value"])
                a_hi, b_hi = _number(a["value_high"]) or a_lo, _number(b["value_high"]) or b_lo
                overlap = a_lo <= b_hi * 1.1 and b_lo <= a_hi * 1.1
                if not overlap and not _errata(a, b):
                    problems.append(f"{path.name}: {a['id']} ({a_lo:g}) and {b['id']} ({b_lo:g}) state the same "
                                    f"result differently and neither row notes it in errata")
    # shares of one increase add up to 1
    shares = defaultdict(list)
    for r in rows:
        if r["unit"] == "share of the increase" and _number(r["value"]) is not None:
            shares[(r["scenario"], r[scope])].append(r)
    for key, group in shares.items():
        total = sum(float(r["value"]) for r in group)
        if abs(total - 1.0) > 0.02 and not _errata(*group):
            problems.append(f"{path.name}: the shares of the increase for {key} add up to {total:g}, not 1")
    for a, b, c in CHAINS.get(path.name, []):
        if not all(i in by_id for i in (a, b, c)):
            problems.append(f"{path.name}: the chained ratios {a}, {b}, {c} are not all present")
            continue
        product, stated = float(by_id[a]["value"]) * float(by_id[b]["value"]), float(by_id[c]["value"])
        if not _close(product, stated, 0.02) and not _errata(by_id[a], by_id[b], by_id[c]):
            problems.append(f"{path.name}: {a} x {b} = {product:.3f} but {c} states {stated:g}, and no row notes it")
    for parts, total_id in SUMS.get(path.name, []):
        if not all(i in by_id for i in (*parts, total_id)):
            problems.append(f"{path.name}: {parts} or {total_id} missing")
            continue
        total = sum(float(by_id[p]["value"]) for p in parts)
        if total != float(by_id[total_id]["value"]) and not _errata(*(by_id[p] for p in (*parts, total_id))):
            stated = by_id[total_id]["value"]
            problems.append(f"{path.name}: {' + '.join(parts)} = {total:g}, but {total_id} states {stated}")
    return problems


def _cics_file(path: Path, fields: list[str], rows: list[dict]) -> list[str]:
    if fields != CICS_COLUMNS:
        return [f"{path.name}: columns {fields}; expected {CICS_COLUMNS}"]
    problems = []
    tables = defaultdict(dict)
    for n, row in enumerate(rows, start=2):
        where = f"{path.name}:{n}"
        problems += _source_problems(where, row)
        if row["unit"] != "transactions per second":
            problems.append(f"{where}: unit {row['unit']!r} is not 'transactions per second'")
        clients, tps = _number(row["clients"]), _number(row["value"])
        if clients is None or tps is None:
            problems.append(f"{where}: clients and value must be numbers")
            continue
        if not 0 < tps <= clients * 2 * 1.005:
            problems.append(f"{where}: {tps:g} TPS is more than {clients:g} clients at 2 per second each can drive")
        tables[(row["scenario"], row["payload"], row["protocol"])][int(clients)] = tps
    for key, table in tables.items():
        if sorted(table) != [100, 200, 300, 400, 500, 600]:
            problems.append(f"{path.name}: table {key} has clients {sorted(table)}, not 100 to 600")
    for (scenario, payload, protocol), table in tables.items():
        if protocol.startswith("TCP"):
            continue
        tcp = next((t for (s, p, pr), t in tables.items()
                    if (s, p) == (scenario, payload) and pr.startswith("TCP")), None)
        if tcp is None:
            problems.append(f"{path.name}: no TCP row to compare {protocol} ({payload}) with")
            continue
        for clients, tps in table.items():
            if clients in tcp and tps > tcp[clients] * 1.005:
                problems.append(f"{path.name}: {protocol} ({payload}, {clients} clients) {tps:g} TPS is above TCP "
                                f"{tcp[clients]:g}: SSL cannot be faster than plain TCP")
    return problems


def _queue_file(path: Path, fields: list[str], rows: list[dict]) -> list[str]:
    if fields != QUEUE_COLUMNS:
        return [f"{path.name}: columns {fields}; expected {QUEUE_COLUMNS}"]
    problems = []
    total = weighted = 0.0
    for n, row in enumerate(rows, start=2):
        problems += _source_problems(f"{path.name}:{n}", row)
        length, freq = _number(row["pending_queue_length"]), _number(row["frequency"])
        if length is None or freq is None or not 0 <= length <= 8 or freq < 0:
            problems.append(f"{path.name}:{n}: queue length 0 to 8 and a frequency are needed")
            continue
        total += freq
        weighted += length * freq
    stated_file = path.with_name(QUEUE_AVERAGE[0])
    if total and stated_file.is_file():
        stated = next((float(r["value"]) for r in read(stated_file)[1] if r["id"] == QUEUE_AVERAGE[1]), None)
        if stated is None:
            problems.append(f"{path.name}: {QUEUE_AVERAGE[0]} has no {QUEUE_AVERAGE[1]} row to compare with")
        elif round(weighted / total, 2) != stated:
            problems.append(f"{path.name}: the histogram's average is {weighted / total:.2f}, "
                            f"the study states {stated:g}")
    return problems


def validate(path: Path) -> list[str]:
    fields, rows = read(path)
    if not rows:
        return [f"{path.name}: no rows"]
    if "pending_queue_length" in fields:
        return _queue_file(path, fields, rows)
    if "clients" in fields:
        return _cics_file(path, fields, rows)
    return _statement_file(path, fields, rows)


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point."""
    return validate(path)
