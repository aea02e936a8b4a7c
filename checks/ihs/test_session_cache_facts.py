"""The session-cache facts tables: every row states how far its sources go.

facts/ihs/tls-session-cache.csv (TLS, Apache httpd, IBM HTTP Server) and
facts/was/jsse-session-cache.csv (JSSE, WebSphere) are rendered on the IHS and WebSphere pages. Their
columns, blank cells and sources are checked with every other facts table (checks/test_facts.py).
"confirmed" says how far the sources go: yes, partly, no (the page then says "could not be confirmed"),
or observed (seen only by the runbook's checks).
"""

from pathlib import Path

import pytest

from zrunbook import facts as facts_tables

TABLES = ["ihs/tls-session-cache", "was/jsse-session-cache"]
BAD = Path(__file__).parent / "bad"
STATUS = {"yes", "partly", "no", "observed"}


def problems(rows: list[dict[str, str]], where: str) -> list[str]:
    """A "confirmed" status from STATUS on every row."""
    return [f"{where}:{number}: confirmed is {row['confirmed']!r}, not one of {sorted(STATUS)}"
            for number, row in enumerate(rows, 2) if row["confirmed"] not in STATUS]


@pytest.mark.parametrize("table", TABLES)
def test_every_session_cache_fact_states_how_far_its_sources_go(table):
    assert problems(facts_tables.table(table), table) == []


@pytest.mark.parametrize("table", TABLES)
def test_every_unconfirmed_fact_says_so_in_its_default_or_meaning(table):
    rows = [r for r in facts_tables.table(table) if r["confirmed"] == "no"]
    assert all("could not be confirmed" in r["default"] + r["what it means here"] for r in rows)


def test_status_check_rejects_a_row_without_a_known_status():
    rows = facts_tables.load(BAD / "tls-session-cache-unknown-status.csv", "ihs/tls-session-cache")
    assert problems(rows, "bad") == ["bad:2: confirmed is 'probably', not one of ['no', 'observed', 'partly', 'yes']"]
