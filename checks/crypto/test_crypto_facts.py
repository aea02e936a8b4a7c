"""The crypto chapter's facts tables: every row has a source (a URL or a study file), no blank cells."""

from pathlib import Path

import pytest

from zrunbook import FACTS as FACTS_ROOT
from zrunbook.facts import problems

FACTS = FACTS_ROOT / "crypto"
BAD = Path(__file__).parent / "bad"


@pytest.mark.parametrize("name", sorted(p.name for p in FACTS.glob("*.csv")))
def test_facts_table_rows_are_complete_and_sourced(name):
    assert problems(FACTS / name) == []


def test_facts_check_rejects_a_row_without_source():
    assert problems(BAD / "facts-row-without-source.csv") == ["facts-row-without-source.csv:2: source is empty"]
