"""The session-cache facts tables: every row complete, its status stated, and every source one you can open.

facts/ihs/tls-session-cache.csv (TLS, Apache httpd, IBM HTTP Server) and
facts/was/jsse-session-cache.csv (JSSE, WebSphere) are rendered on the IHS and WebSphere pages.
A source is a URL, a study file (checks the studies' naming), or a check in this repository that
observed the fact; several are separated by " ; ". "confirmed" says how far the sources go: yes,
partly, no (the page then says "could not be confirmed"), or observed (seen only by the runbook's checks).
"""

import csv
from pathlib import Path

import pytest

from zrunbook import facts as facts_tables

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["facts/ihs/tls-session-cache.csv", "facts/was/jsse-session-cache.csv"]
BAD = Path(__file__).parent / "bad"
COLUMNS = ["product", "setting", "default", "values", "what it means here", "confirmed", "source"]
STATUS = {"yes", "partly", "no", "observed"}


def problems(path: Path) -> list[str]:
    """The shared facts-table checks, and a "confirmed" status from STATUS on every row."""
    found = facts_tables.problems(path, COLUMNS)
    with path.open(encoding="utf-8", newline="") as fh:
        for number, row in enumerate(csv.DictReader(fh), 2):
            status = row.get("confirmed")
            if status not in STATUS and None not in row:
                found.append(f"{path.name}:{number}: confirmed is {status!r}, not one of {sorted(STATUS)}")
    return found


@pytest.mark.parametrize("table", TABLES)
def test_session_cache_facts_are_complete_and_sourced(table):
    assert problems(ROOT / table) == []


@pytest.mark.parametrize("table", TABLES)
def test_every_unconfirmed_fact_says_so_in_its_default_or_meaning(table):
    with (ROOT / table).open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["confirmed"] == "no"]
    assert all("could not be confirmed" in r["default"] + r["what it means here"] for r in rows)


def test_facts_check_rejects_a_row_without_a_source():
    assert problems(BAD / "tls-session-cache-row-without-source.csv") == [
        "tls-session-cache-row-without-source.csv:2: source is empty"]
