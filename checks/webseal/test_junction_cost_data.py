"""The SSL-junction measurement the page shows: its runs, medians and spreads agree with each other.

The file is written by ``python -m checks.webseal.junction_bench`` (see its docstring); this check reads it.
"""

import csv
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REL = "webseal/apache/ssl-junction-cost.csv"


def rows() -> list[dict[str, str]]:
    with open(ROOT / "snippets" / REL, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.snippet(REL, checker="data-validator")
def test_measurement_has_at_least_three_runs_of_both_junctions_with_the_load_recorded():
    runs = [r for r in rows() if r["row"] == "run"]
    for junction in ("tcp-jct", "ssl-jct"):
        mine = [r for r in runs if r["junction"] == junction]
        assert len(mine) >= 3
        assert all(float(r["requests_per_second"]) > 0 and float(r["front_cpu_ms_per_request"]) > 0 for r in mine)
        assert all(len(r["load_before"].split()) == 3 for r in mine)


@pytest.mark.snippet(REL, checker="data-validator")
def test_medians_and_spreads_are_computed_from_the_runs():
    data = rows()
    runs = [r for r in data if r["row"] == "run"]
    tcp, ssl = runs[::2], runs[1::2]
    ratios = [float(s["requests_per_second"]) / float(t["requests_per_second"]) for t, s in zip(tcp, ssl, strict=True)]
    cpu = [float(s["front_cpu_ms_per_request"]) / float(t["front_cpu_ms_per_request"])
           for t, s in zip(tcp, ssl, strict=True)]
    summary = {r["row"]: r["ssl_over_tcp"] for r in data if r["row"] != "run"}
    for row, values in (("median-throughput-ratio", ratios), ("median-cpu-per-request-ratio", cpu)):
        median, spread = summary[row].split(" (spread ")
        assert float(median) == pytest.approx(statistics.median(values), abs=0.002)
        want = 100 * (max(values) - min(values)) / statistics.median(values)
        assert float(spread.rstrip(" %)")) == pytest.approx(want, abs=0.6)
