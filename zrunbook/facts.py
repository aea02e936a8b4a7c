"""The checker for the facts tables (CSV files with a ``source`` column) that validators and pages share.

A row is complete when it has every cell and none is blank. Its source is one or more of these,
separated by " ; ": an http(s) URL, a study file (``000_<16 hex digits>.txt``), or a check in this
repository that observed the fact (``checks/...``, which must exist).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URL = re.compile(r"^https?://\S+$")
STUDY = re.compile(r"^\d{3}_[0-9a-f]{16}\.txt$")


def source_problems(source: str) -> list[str]:
    found = []
    for part in (p.strip() for p in source.split(" ; ")):
        if URL.match(part) or STUDY.match(part) or (part.startswith("checks/") and (ROOT / part).is_file()):
            continue
        found.append(f"source {part!r} is not a URL, a study file or a check in this repository")
    return found


def problems(path: Path, columns: list[str] | None = None) -> list[str]:
    """What is wrong with the table at path (its columns must be exactly ``columns`` when given)."""
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        if columns is not None and reader.fieldnames != columns:
            return [f"{path.name}: columns {reader.fieldnames}, expected {columns}"]
        if "source" not in (reader.fieldnames or []):
            return [f"{path.name}: no source column"]
        found = []
        for number, row in enumerate(reader, 2):
            if None in row or None in row.values():
                found.append(f"{path.name}:{number}: wrong number of cells")
                continue
            found += [f"{path.name}:{number}: {k} is empty" for k, v in row.items() if not v.strip()]
            if row["source"].strip():
                found += [f"{path.name}:{number}: {p}" for p in source_problems(row["source"])]
        return found
