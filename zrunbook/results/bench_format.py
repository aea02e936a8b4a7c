"""Validator for what ``snippets/results/measure-tls.sh`` writes: machine.csv, runs.csv, summary.csv and its
console output.

``validate_dir(files, min_runs)`` takes the three CSV texts (and optionally the console text) and returns a
list of problems. It checks the columns, the machine description (CPU model, cores, OpenSSL version,
load), that every setup has every test, that counts and CPU seconds are positive, that each summary row's
median, min, max and spread are those of its rows in runs.csv, that the ratio to the bound is the
median over the bound, and that the console prints the summary's numbers.
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from collections import defaultdict
from pathlib import Path

RUNS_COLUMNS = ["run", "setup", "test", "key", "payload", "cipher", "count", "wall_seconds", "server_cpu_seconds",
                "per_cpu_second", "unit", "bound", "bound_unit"]
SUMMARY_COLUMNS = ["setup", "test", "key", "payload", "cipher", "runs", "median", "min", "max", "spread_percent",
                   "unit", "bound_median", "ratio_to_bound"]
MACHINE_ITEMS = ["cpu model", "cores", "architecture", "kernel", "openssl", "apache", "site file", "runs",
                 "seconds per test", "load average before", "load average after"]
SETUPS = {"x86_64": ["accelerated", "software"], "s390x": ["cpacf+cex", "cpacf", "software"]}
TESTS = {("full-handshake", "rsa2048", ""), ("full-handshake", "rsa4096", ""), ("full-handshake", "ecdsa-p256", ""),
         ("full-handshake-openssl-s_server", "rsa2048", ""), ("full-handshake-openssl-s_server-rsa-kex", "rsa2048", ""),
         ("full-handshake-get-4k", "rsa2048", ""),
         ("resumed-handshake-get-4k", "rsa2048", ""), ("bulk", "rsa2048", "4k"), ("bulk", "rsa2048", "32k"),
         ("bulk", "rsa2048", "2.9m"), ("junction-tcp", "rsa2048", "5.8k"), ("junction-ssl", "rsa2048", "5.8k")}
WITH_BOUND = {"full-handshake", "full-handshake-openssl-s_server", "full-handshake-openssl-s_server-rsa-kex", "bulk"}
CONSOLE = re.compile(r"^(\S+)\s+(bulk (\S+)|(\S+) (\S+))\s+([\d.]+) (handshakes|MB|requests) per CPU-second "
                     r"\(spread ([\d.]+) %\)(, ([\d.]+) of the bound ([\d.]+))?$")


def _csv(text: str) -> tuple[list[str], list[dict]]:
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames or []), list(reader)


def _num(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def validate_dir(machine: str, runs: str, summary: str, console: str | None = None, min_runs: int = 1) -> list[str]:
    problems: list[str] = []
    fields, mrows = _csv(machine)
    items = {r.get("item"): r.get("value", "") for r in mrows}
    if fields != ["item", "value"]:
        problems.append(f"machine.csv: columns {fields}, expected item,value")
    missing = [i for i in MACHINE_ITEMS if not items.get(i)]
    if missing:
        problems.append(f"machine.csv: no value for {missing}")
    if not re.fullmatch(r"\d+", items.get("cores", "")):
        problems.append(f"machine.csv: cores {items.get('cores')!r} is not a number")
    if not items.get("openssl", "").startswith("OpenSSL "):
        problems.append(f"machine.csv: openssl {items.get('openssl')!r} is not an `openssl version` line")
    for item in ("load average before", "load average after"):
        if not re.fullmatch(r"[\d.]+ [\d.]+ [\d.]+", items.get(item, "")):
            problems.append(f"machine.csv: {item} {items.get(item)!r} is not three load averages")
    arch = items.get("architecture", "")
    nruns = int(items["runs"]) if items.get("runs", "").isdigit() else 0
    if nruns < min_runs:
        problems.append(f"machine.csv: {nruns} run(s); at least {min_runs} are needed for a median and a spread")

    fields, rrows = _csv(runs)
    if fields != RUNS_COLUMNS:
        return problems + [f"runs.csv: columns {fields}, expected {RUNS_COLUMNS}"]
    per_cpu = defaultdict(list)
    bounds = defaultdict(list)
    for n, r in enumerate(rrows, start=2):
        key = (r["setup"], r["test"], r["key"], r["payload"])
        values = {c: _num(r[c]) for c in ("count", "wall_seconds", "server_cpu_seconds", "per_cpu_second")}
        if any(v is None or v <= 0 for v in values.values()):
            problems.append(f"runs.csv:{n}: count, seconds and CPU seconds must be positive numbers: {values}")
            continue
        if abs(values["per_cpu_second"] - _expected(r, values)) > 0.02 * values["per_cpu_second"] + 0.2 \
                and r["test"] != "bulk":
            problems.append(f"runs.csv:{n}: per_cpu_second {values['per_cpu_second']:g} is not count / CPU seconds")
        per_cpu[key].append(values["per_cpu_second"])
        if r["test"] in WITH_BOUND:
            b = _num(r["bound"])
            if b is None or b <= 0:
                problems.append(f"runs.csv:{n}: {r['test']} has no bound")
            else:
                bounds[key].append(b)
    setups = sorted({k[0] for k in per_cpu})
    if arch in SETUPS and not set(setups) <= set(SETUPS[arch]):
        problems.append(f"runs.csv: setups {setups} are not among {SETUPS[arch]} for {arch}")
    for s in setups:
        have = {(t, k, p) for (ss, t, k, p) in per_cpu if ss == s}
        if have != TESTS:
            problems.append(f"runs.csv: setup {s} misses {sorted(TESTS - have)} and has extra {sorted(have - TESTS)}")
    for key, values in per_cpu.items():
        if len(values) != nruns:
            problems.append(f"runs.csv: {key} has {len(values)} rows for {nruns} run(s)")

    fields, srows = _csv(summary)
    if fields != SUMMARY_COLUMNS:
        return problems + [f"summary.csv: columns {fields}, expected {SUMMARY_COLUMNS}"]
    seen = set()
    for n, r in enumerate(srows, start=2):
        key = (r["setup"], r["test"], r["key"], r["payload"])
        seen.add(key)
        values = sorted(per_cpu.get(key, []))
        if not values:
            problems.append(f"summary.csv:{n}: {key} has no rows in runs.csv")
            continue
        med = statistics.median(values)
        for col, want in (("median", med), ("min", values[0]), ("max", values[-1]),
                          ("spread_percent", 100 * (values[-1] - values[0]) / med if med else 0)):
            got = _num(r[col])
            if got is None or abs(got - want) > 0.06 + 0.001 * abs(want):
                problems.append(f"summary.csv:{n}: {col} of {key} is {r[col]}, the runs give {want:.1f}")
        if int(r["runs"] or 0) != len(values):
            problems.append(f"summary.csv:{n}: runs {r['runs']} but runs.csv has {len(values)}")
        if r["test"] in WITH_BOUND:
            bm, ratio = _num(r["bound_median"]), _num(r["ratio_to_bound"])
            if bm is None or ratio is None:
                problems.append(f"summary.csv:{n}: {key} needs bound_median and ratio_to_bound")
            elif abs(ratio - _num(r["median"]) / bm) > 0.0015:
                problems.append(f"summary.csv:{n}: ratio_to_bound {ratio} is not median / bound_median "
                                f"({_num(r['median']) / bm:.3f})")
    if seen != set(per_cpu):
        problems.append(f"summary.csv: rows {sorted(set(per_cpu) - seen)} of runs.csv are not summarised")

    if console is not None:
        problems += _console(console, srows)
    return problems


def _expected(r: dict, values: dict) -> float:
    return values["count"] / values["server_cpu_seconds"]


def _console(console: str, srows: list[dict]) -> list[str]:
    problems = []
    lines = console.strip("\n").splitlines()
    if not lines or not lines[0].startswith("TLS on "):
        problems.append("console: the first line does not say what was measured ('TLS on ...')")
    if not lines or not lines[-1].startswith("Files: "):
        problems.append("console: the last line does not name the files written ('Files: ...')")
    body = lines[1:-1]
    if len(body) != len(srows):
        problems.append(f"console: {len(body)} result lines for {len(srows)} summary rows")
    for line, r in zip(body, srows, strict=False):
        m = CONSOLE.match(line)
        if not m:
            problems.append(f"console: cannot read {line!r}")
            continue
        setup, payload, test, key, median = m.group(1), m.group(3), m.group(4), m.group(5), m.group(6)
        if test and test.startswith("junction-"):  # printed as "junction-ssl 5.8k": the payload, key rsa2048
            key, payload = "rsa2048", key
        got = (setup, "bulk" if payload and not test else test, key or "rsa2048", payload or "")
        if got != (r["setup"], r["test"], r["key"], r["payload"]) or median != r["median"]:
            problems.append(f"console: {line!r} does not match summary row {r}")
    return problems


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: any file of a full measurement checks its whole folder (three runs
    at least, the console output when the folder holds it)."""
    folder = path.parent
    texts = [(folder / f).read_text(encoding="utf-8") for f in ("machine.csv", "runs.csv", "summary.csv")]
    console = folder / "measure-tls.out"
    return validate_dir(*texts, console.read_text(encoding="utf-8") if console.exists() else None, min_runs=3)
