"""The facts tables (CSV files under ``facts/``): one loader, one schema, one source rule.

``facts/schema.toml`` declares every table: its columns in order, the ones that may be blank, and the
column that cites its source (``source``; the errata and traceability tables cite the study they are
about in ``study``). ``load(path)`` and ``table(name)`` read a table and check it against its entry;
anything wrong (a table the schema does not know, other columns, a row with too few or too many cells,
a blank required cell) raises ``FactsError`` naming file, line and column. ``problems(path)`` returns the
same findings and the source problems of every row, as a list, for the tests.

A source is one or more references separated by " ; ", each optionally followed by a hint in
parentheses, e.g. ``ibm-was8-ssl-2013 (Table 7)``. A reference is

* an https URL,
* the id of a document listed in ``facts/documents.csv`` (the studies and other publications that have
  no page to link to, or whose page is worth naming), or
* a file in this project: a relative path under snippets/, checks/, zrunbook/, facts/ or docs/ that
  exists (a test may be named as ``checks/x/test_y.py::test_z``).

Anything else (an absolute path, a file outside the project, a study's local file name) is a problem.
``read_csv(path)`` (header and rows) and ``rows(path)`` are the plain reader under all of it, for CSV
data outside ``facts/``.
"""

from __future__ import annotations

import csv
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from zrunbook import FACTS, ROOT

SCHEMA = FACTS / "schema.toml"
DOCUMENTS = FACTS / "documents.csv"
PROJECT_DIRS = ("snippets", "checks", "zrunbook", "facts", "docs")
SEPARATOR = " ; "
REFERENCE = re.compile(r"^(?P<ref>\S+)(?:\s+\((?P<hint>[^()]+)\))?$")


class FactsError(ValueError):
    """A facts table that does not match its schema (the message names file, line and column)."""


@dataclass(frozen=True)
class Reference:
    """One reference of a source cell: kind is "url", "document" or "file"; hint is the part in parentheses."""

    kind: str
    target: str
    hint: str = ""


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str | None]]]:
    """Header and rows of a CSV file, as csv.DictReader gives them (short rows get None, long rows a None key)."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


def rows(path: Path) -> list[dict[str, str | None]]:
    """The rows of a CSV file that is not a facts table (measured results, transcribed study data)."""
    return read_csv(path)[1]


def measured(path: Path, columns: list[str]) -> tuple[list[dict], list[str]]:
    """A measured-data file's rows, or the one problem that stops a validator: it cannot be read, or it is empty,
    or its columns are not ``columns`` in that order. Returns (rows, []) or ([], [problem])."""
    try:
        data = rows(path)
    except (OSError, csv.Error) as exc:
        return [], [f"{path.name}: cannot read: {exc}"]
    if not data or list(data[0]) != columns:
        return [], [f"{path.name}: the columns must be {', '.join(columns)}"]
    return data, []


@cache
def schema() -> dict[str, dict]:
    """Table name (path under facts/ without .csv) -> {"columns", "optional", "source"}."""
    with open(SCHEMA, "rb") as fh:
        tables = tomllib.load(fh)["tables"]
    for name, entry in tables.items():
        entry.setdefault("optional", [])
        entry.setdefault("source", "source")
        unknown = [c for c in [*entry["optional"], entry["source"]] if c not in entry["columns"]]
        if unknown:
            raise FactsError(f"{SCHEMA.name}: table {name!r} names columns {unknown} it does not have")
    return tables


def name_of(path: Path) -> str:
    """The schema name of a table file: its path under facts/ without .csv."""
    try:
        return Path(path).resolve().relative_to(FACTS.resolve()).with_suffix("").as_posix()
    except ValueError:
        return Path(path).stem


def _rel(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(ROOT.resolve()).as_posix()
    except ValueError:
        return Path(path).name


def schema_problems(path: Path, name: str | None = None) -> tuple[list[str], list[dict[str, str]]]:
    """What does not match the schema in the table at path (as table ``name``, by default its own), and its rows."""
    name = name or name_of(path)
    where = _rel(path)
    entry = schema().get(name)
    if entry is None:
        return [f"{where}: table {name!r} is not declared in facts/{SCHEMA.name}"], []
    fields, rows = read_csv(path)
    if fields != entry["columns"]:
        missing = [c for c in entry["columns"] if c not in fields]
        extra = [c for c in fields if c not in entry["columns"]]
        detail = "; ".join(filter(None, [f"missing {missing}" if missing else "",
                                         f"not declared {extra}" if extra else ""])) or "in another order"
        return [f"{where}:1: columns {fields}, the schema declares {entry['columns']} ({detail})"], []
    found = []
    for number, row in enumerate(rows, 2):
        if None in row or None in row.values():
            cells = (len(fields) + len(row[None]) if None in row
                     else sum(v is not None for k, v in row.items()))
            found.append(f"{where}:{number}: {cells} cells, the header has {len(fields)}")
            continue
        found += [f"{where}:{number}: column {column!r} is empty" for column in fields
                  if column not in entry["optional"] and not row[column].strip()]
    return found, rows


def load(path: Path, name: str | None = None) -> list[dict[str, str]]:
    """The rows of the table at path, checked against the schema (FactsError on the first mismatch)."""
    found, rows = schema_problems(Path(path), name)
    if found:
        raise FactsError("\n".join(found))
    return rows


def table(name: str) -> list[dict[str, str]]:
    """The rows of facts/<name>.csv, checked against the schema."""
    return load(FACTS / f"{name}.csv", name)


def source_column(path: Path, name: str | None = None) -> str:
    return schema()[name or name_of(path)]["source"]


@cache
def documents() -> dict[str, dict[str, str]]:
    """Document id -> its row in facts/documents.csv (title, short title, publisher, year, url, identifier)."""
    return {r["id"]: r for r in load(DOCUMENTS, "documents")}


def references(source: str) -> list[Reference | str]:
    """The references of a source cell; a part that is none of the three kinds comes back as a problem (str)."""
    out: list[Reference | str] = []
    for part in source.split(SEPARATOR):
        part = part.strip()
        match = REFERENCE.match(part)
        if not match:
            out.append(f"source {part!r} is not one reference with an optional (hint)")
            continue
        ref, hint = match["ref"], match["hint"] or ""
        if ref.startswith("https://"):
            out.append(Reference("url", ref, hint))
        elif ref in documents():
            out.append(Reference("document", ref, hint))
        elif _project_file(ref):
            out.append(Reference("file", ref, hint))
        elif ref.startswith("http://"):
            out.append(f"source {ref!r} is a plain http URL; cite its https address")
        elif ref.startswith("/") or ".." in Path(ref).parts:
            out.append(f"source {ref!r} is a path outside the project")
        elif re.fullmatch(r"[a-z0-9][a-z0-9-]*", ref):
            out.append(f"source {ref!r} is not a document id in facts/{DOCUMENTS.name}")
        else:
            out.append(f"source {ref!r} is not an https URL, a document id in facts/{DOCUMENTS.name} "
                       f"or a file under {', '.join(d + '/' for d in PROJECT_DIRS)}")
    return out


def _project_file(ref: str) -> bool:
    path = ref.split("::")[0]
    if path.startswith("/") or ".." in Path(path).parts or path.split("/")[0] not in PROJECT_DIRS:
        return False
    return (ROOT / path).is_file()


def source_problems(source: str) -> list[str]:
    """Why a source cell is not a real source (empty when it is)."""
    if not source.strip():
        return ["source is empty"]
    return [r for r in references(source) if isinstance(r, str)]


def problems(path: Path, name: str | None = None) -> list[str]:
    """Everything wrong with the table at path: the schema's findings, then each row's source problems."""
    found, rows = schema_problems(Path(path), name)
    if found:
        return found
    column = source_column(path, name)
    where = _rel(path)
    for number, row in enumerate(rows, 2):
        if row[column].strip():
            found += [f"{where}:{number}: column {column!r}: {p}" for p in source_problems(row[column])]
    return found


def tables() -> list[Path]:
    """Every CSV file under facts/ (each must be declared in the schema)."""
    return sorted(FACTS.rglob("*.csv"))
