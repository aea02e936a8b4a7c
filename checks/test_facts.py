"""Every facts table under facts/ matches its entry in facts/schema.toml and every row has a real source.

The rule is zrunbook/facts.py's, the only copy: a source is an https URL, a document id listed in
facts/documents.csv (a section or table hint may follow in parentheses), or a file in this project. The
negative cases under checks/facts_bad/ are the mistakes the rule exists for: a path outside the project
(the old /work/shared/REFERENCE-FACTS.md), an unknown document id, a study's local file name, a missing
required column, a blank source, a row with too few cells.
"""

from pathlib import Path

import pytest

from zrunbook import facts

BAD = Path(__file__).resolve().parent / "facts_bad"
AS = "crypto/ap-hwtypes"  # the schema entry the negative cases are checked against


@pytest.mark.parametrize("path", facts.tables(), ids=facts.name_of)
def test_facts_table_matches_its_schema_and_every_row_has_a_real_source(path):
    assert facts.problems(path) == []


def test_the_schema_declares_exactly_the_tables_there_are():
    assert sorted(facts.schema()) == sorted(facts.name_of(p) for p in facts.tables())


def test_every_document_is_cited_by_some_table():
    cited = {r.target for p in facts.tables() if facts.name_of(p) != "documents"
             for row in facts.load(p) for r in facts.references(row[facts.source_column(p)])
             if isinstance(r, facts.Reference) and r.kind == "document"}
    assert cited == set(facts.documents())


def test_a_row_citing_a_path_outside_the_project_is_rejected():
    assert facts.problems(BAD / "source-outside-project.csv", AS) == [
        "checks/facts_bad/source-outside-project.csv:2: column 'source': "
        "source '/work/shared/REFERENCE-FACTS.md' is a path outside the project",
        "checks/facts_bad/source-outside-project.csv:3: column 'source': "
        "source '../shared/REFERENCE-FACTS.md' is a path outside the project"]


def test_a_row_citing_an_unknown_document_id_is_rejected():
    assert facts.problems(BAD / "unknown-document-id.csv", AS) == [
        "checks/facts_bad/unknown-document-id.csv:2: column 'source': "
        "source 'ibm-was8-ssl-2031' is not a document id in facts/documents.csv"]


def test_a_study_file_name_a_plain_http_url_and_a_missing_project_file_are_rejected():
    found = facts.problems(BAD / "study-file-name-and-http.csv", AS)
    assert len(found) == 3, found
    assert "'000_1ab4cc40e3a5fd7a.txt' is not an https URL, a document id" in found[0]
    assert "is a plain http URL; cite its https address" in found[1]
    assert "'checks/crypto/test_gone.py' is not an https URL" in found[2]


def test_a_table_missing_a_required_column_is_rejected():
    assert facts.problems(BAD / "missing-required-column.csv", AS) == [
        "checks/facts_bad/missing-required-column.csv:1: columns ['hwtype', 'card', 'source'], the schema declares "
        "['hwtype', 'card', 'supported by Linux today', 'source'] (missing ['supported by Linux today'])"]


def test_a_blank_source_and_a_short_row_are_rejected():
    assert facts.problems(BAD / "row-without-source.csv", AS) == [
        "checks/facts_bad/row-without-source.csv:2: column 'source' is empty"]
    assert facts.problems(BAD / "wrong-cell-count.csv", AS) == [
        "checks/facts_bad/wrong-cell-count.csv:2: 3 cells, the header has 4"]


@pytest.mark.negative(invariant="the facts tables' schema",
                      expects="FactsError: the missing column, and a table not declared in facts/schema.toml")
def test_load_refuses_a_bad_table_and_a_table_the_schema_does_not_know():
    with pytest.raises(facts.FactsError, match=r"missing-required-column.csv:1: columns"):
        facts.load(BAD / "missing-required-column.csv", AS)
    with pytest.raises(facts.FactsError, match=r"table 'row-without-source' is not declared in facts/schema.toml"):
        facts.load(BAD / "row-without-source.csv")


def test_good_sources_pass_with_their_hints():
    assert facts.source_problems("ibm-was8-ssl-2013 (Table 7) ; https://www.rfc-editor.org/rfc/rfc8446 ; "
                                 "checks/crypto/test_recorded_outputs.py::test_x") == []
    assert [r.kind for r in facts.references("ibm-ctg91-ssl-2015 ; facts/documents.csv")] == ["document", "file"]
