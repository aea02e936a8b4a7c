"""The crypto chapter's facts tables: every row has a source (a URL or a study file), no blank cells."""

import csv
import re
from pathlib import Path

import pytest

FACTS = Path(__file__).parent / "facts"
BAD = Path(__file__).parent / "bad"
SOURCE = re.compile(r"^(https://\S+|\d{3}_[0-9a-f]{16}\.txt)$")


def problems(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if "source" not in (reader.fieldnames or []):
            return [f"{path.name}: no source column"]
        found = []
        for number, row in enumerate(reader, 2):
            if None in row or any(value is None for value in row.values()):
                found.append(f"{path.name}:{number}: wrong number of cells")
                continue
            if not SOURCE.match(row["source"].strip()):
                found.append(f"{path.name}:{number}: source {row['source']!r} is neither a URL nor a study file")
            found += [f"{path.name}:{number}: {k} is empty" for k, v in row.items() if k != "source" and not v.strip()]
        return found


@pytest.mark.parametrize("name", sorted(p.name for p in FACTS.glob("*.csv")))
def test_facts_table_rows_are_complete_and_sourced(name):
    assert problems(FACTS / name) == []


def test_facts_check_rejects_a_row_without_source():
    assert problems(BAD / "facts-row-without-source.csv") == [
        "facts-row-without-source.csv:2: source '' is neither a URL nor a study file"]
