"""Counts and lists the errata page states, computed from facts/errata/errata.csv (never typed twice)."""

from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = "facts/errata/errata.csv"
DEPENDS_ON = [DATA]


def _rows() -> list[dict]:
    with open(ROOT / DATA, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def checked_rows() -> str:
    rows = _rows()
    return f"{sum(r['checker'] != 'review' for r in rows)} of the {len(rows)}"


def review_rows() -> str:
    return ", ".join(r["id"] for r in _rows() if r["checker"] == "review")
