"""The session-cache facts tables: every row complete, its status stated, and every source one you can open.

checks/ihs/facts/tls-session-cache.csv (TLS, Apache httpd, IBM HTTP Server) and
checks/was/facts/jsse-session-cache.csv (JSSE, WebSphere) are rendered on the IHS and WebSphere pages.
A source is a URL, a study file (checks the studies' naming), or a check in this repository that
observed the fact; several are separated by " ; ". "confirmed" says how far the sources go: yes,
partly, no (the page then says "could not be confirmed"), or observed (seen only by the runbook's checks).
"""

import csv
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["checks/ihs/facts/tls-session-cache.csv", "checks/was/facts/jsse-session-cache.csv"]
BAD = Path(__file__).parent / "bad"
COLUMNS = ["product", "setting", "default", "values", "what it means here", "confirmed", "source"]
STATUS = {"yes", "partly", "no", "observed"}
URL = re.compile(r"^https?://\S+$")
STUDY = re.compile(r"^\d{3}_[0-9a-f]{16}\.txt$")


def source_problems(source: str) -> list[str]:
    found = []
    for part in (p.strip() for p in source.split(" ; ")):
        if URL.match(part) or STUDY.match(part):
            continue
        if part.startswith("checks/") and (ROOT / part).is_file():
            continue
        found.append(f"source {part!r} is not a URL, a study file or a check in this repository")
    return found


def problems(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != COLUMNS:
            return [f"{path.name}: columns {reader.fieldnames}, expected {COLUMNS}"]
        found = []
        for number, row in enumerate(reader, 2):
            if None in row or None in row.values():
                found.append(f"{path.name}:{number}: wrong number of cells")
                continue
            found += [f"{path.name}:{number}: {k} is empty" for k, v in row.items() if not v.strip()]
            if row["confirmed"] not in STATUS:
                found.append(f"{path.name}:{number}: confirmed is {row['confirmed']!r}, not one of {sorted(STATUS)}")
            if row["source"].strip():
                found += [f"{path.name}:{number}: {p}" for p in source_problems(row["source"])]
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
