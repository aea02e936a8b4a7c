"""The Db2 CLP snippets against the validator in clp.py, and the validator against the study's mistakes."""

from __future__ import annotations

from pathlib import Path

import pytest

from zrunbook import facts as facts_tables
from zrunbook.db2 import values
from zrunbook.formats import clp

BAD = Path(__file__).resolve().parent / "bad"



def problems(path: Path, version: str) -> list[str]:
    return clp.validate(path.read_text(encoding="utf-8"), version)


@pytest.mark.snippet("db2/logs/set-log-params.clp", "db2/logs/set-log-params-2013.sh", checker="db2-clp")
def test_log_space_stated_on_the_page_is_six_primary_files_of_one_gib():
    assert values.log_bytes() == values.log_bytes(values.LOGS_2013, "9.7") == (6 << 30, 6 << 30)


@pytest.mark.snippet("db2/bufferpool/set-buffer-pool.clp", "db2/bufferpool/set-buffer-pool-2013.sh",
                     checker="db2-clp")
def test_buffer_pool_stated_on_the_page_is_four_gib():
    assert values.buffer_pool_bytes() == values.buffer_pool_bytes(values.BUFFER_POOL_2013, "9.7") == 4 << 30


@pytest.mark.negative("db2/logs/set-log-params.clp",
                      expects="for Db2 9.7: UPDATE DB CFG LOGFILSIZ 4194304 is outside 4..1048572")
@pytest.mark.snippet("db2/logs/set-log-params.clp", checker="db2-clp")
def test_validator_rejects_a_log_file_size_beyond_9_7s_range():
    assert problems(BAD / "logfilsiz-out-of-range-9.7.clp", "9.7") == [
        "line 5: UPDATE DB CFG LOGFILSIZ 4194304 is outside 4..1048572"]
    assert problems(BAD / "logfilsiz-out-of-range-9.7.clp", "current") == []


@pytest.mark.negative("db2/tuning/autoconfigure-tradedb.clp", expects="AUTOCONFIGURE: unknown keyword 'MEM_PCT'")
@pytest.mark.snippet("db2/tuning/autoconfigure-tradedb.clp", checker="db2-clp")
def test_validator_rejects_an_unknown_autoconfigure_keyword():
    assert problems(BAD / "unknown-keyword.clp", "current") == ["line 6: AUTOCONFIGURE: unknown keyword 'MEM_PCT'"]


@pytest.mark.negative("db2/logs/set-log-params.clp",
                      expects="LOGPRIMARY 200 + LOGSECOND 100 = 300 exceeds 256 (circular logging)")
@pytest.mark.snippet("db2/logs/set-log-params.clp", checker="db2-clp")
def test_validator_rejects_primary_plus_secondary_log_files_over_256():
    found = problems(BAD / "log-files-over-limit.clp", "current")
    assert found == ["database TRADEDB: LOGPRIMARY 200 + LOGSECOND 100 = 300 exceeds 256 (circular logging)"]


@pytest.mark.negative("db2/tuning/autoconfigure-tradedb.clp",
                      expects="the study's AUTOCONFIGURE split without continuation: 10 lines continue the statement "
                              "above")
@pytest.mark.snippet("db2/tuning/autoconfigure-tradedb.clp", checker="db2-clp")
def test_validator_rejects_the_studys_autoconfigure_split_without_continuation_in_a_clp_file():
    found = problems(BAD / "autoconfigure-split-without-continuation.clp", "9.7")
    assert "line 5: AUTOCONFIGURE has no APPLY clause (DB ONLY, DB AND DBM or NONE)" in found
    assert sum("continues the statement above" in p for p in found) == 10


@pytest.mark.snippet("db2/tuning/autoconfigure-tradedb-2013.sh", checker="db2-clp")
def test_validator_rejects_the_studys_autoconfigure_split_without_backslashes_in_a_shell_script():
    found = problems(BAD / "autoconfigure-split-without-continuation.sh", "9.7")
    assert sum("does not end with '\\'" in p for p in found) == 10
    assert "line 8: AUTOCONFIGURE has no APPLY clause (DB ONLY, DB AND DBM or NONE)" in found


@pytest.mark.snippet("db2/registry/set-registry-variables-2013.sh", checker="db2-clp")
def test_validator_rejects_the_studys_yes_for_page_cleaning():
    assert problems(BAD / "registry-page-cleaning-yes.sh", "9.7") == [
        "line 8: db2set DB2_USE_ALTERNATE_PAGE_CLEANING='YES': allowed ON|OFF"]


def test_validator_terminated_statement_may_span_lines_but_must_end():
    assert clp.validate("UPDATE DB CFG FOR X USING\n LOGPRIMARY 3;\n", "current") == []
    assert clp.validate("UPDATE DB CFG FOR X USING LOGPRIMARY 3;\nCONNECT RESET\n", "current") == [
        "line 2: statement is not terminated with ';' (db2 -tvf would not run it)"]


def test_facts_table_names_only_known_versions():
    # sources and blank cells: checks/test_facts.py, for every facts table
    assert {r["version"] for r in facts_tables.load(clp.FACTS)} <= {"all", "9.7", "current"}
