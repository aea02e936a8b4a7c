"""Counts and lists the errata page states, computed from facts/errata/errata.csv (never typed twice)."""

from __future__ import annotations

from zrunbook import ROOT
from zrunbook import facts as facts_tables

DATA = "facts/errata/errata.csv"
DEPENDS_ON = [DATA]


def _rows() -> list[dict]:
    return facts_tables.load(ROOT / DATA)


def checked_rows() -> str:
    rows = _rows()
    return f"{sum(r['checker'] != 'review' for r in rows)} of the {len(rows)}"


def review_rows() -> str:
    return ", ".join(r["id"] for r in _rows() if r["checker"] == "review")
