"""The directory server's Db2 database (WebSEAL chapter): the Db2 chapter's CLP validator plus the statements it lacks.

``validate(text, version)`` runs ``zrunbook.formats.clp.validate`` (shell or CLP script, the Db2 chapter's facts) and
then handles what that validator reports as unknown because the Db2 chapter does not use it: CREATE DATABASE,
CREATE BUFFERPOOL, CREATE TABLESPACE, UPDATE DBM CFG, and the keywords APPLHEAPSZ, DBHEAP and DB2COMM. Those
are checked against ``facts/webseal/ldap-db2-statements.csv`` (with sources). Across statements it
checks what makes the study's commands fail: buffer pools and table spaces are created only after CONNECT TO,
a table space's page size equals the page size of the buffer pool it names (and a page size other than the
database's 4 KB needs such a buffer pool), SYSTEM or DATABASE managed table spaces name their containers
(USING), and the clauses removed since DB2 8.2 are gone.

``version``: "8.2" (the 2007 study; the Db2 chapter's 9.7 facts are used for the shared keywords), "9.7",
or "current" (11.5 / 12.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import facts as facts_tables
from zrunbook.formats import clp

FACTS = FACTS_ROOT / "webseal" / "ldap-db2-statements.csv"
UNKNOWN = re.compile(r"^line (\d+): unknown command (.+) \(not in this validator's facts\)$")
UNKNOWN_KEY = re.compile(r"^line (\d+): (UPDATE DB CFG|UPDATE DBM CFG|db2set): unknown keyword '([A-Z0-9_]+)'$")
KIND = {"UPDATE DB CFG": "db-cfg", "UPDATE DBM CFG": "dbm-cfg", "db2set": "db2set"}
PAGE = {"4K": 4, "8K": 8, "16K": 16, "32K": 32, "4096": 4, "8192": 8, "16384": 16, "32768": 32}


@dataclass(frozen=True)
class Fact:
    statement: str
    keyword: str
    kind: str
    low: int | None
    high: int | None
    values: tuple[str, ...]
    note: str


def load_facts(version: str) -> dict[tuple[str, str], Fact]:
    out = {}
    for row in facts_tables.load(FACTS):
        applies = row["version"] == "all" or row["version"] == version
        if row["kind"] == "flag":  # a clause that exists only in the versions listed
            applies = True
        if not applies:
            continue
        out[(row["statement"], row["keyword"])] = Fact(
            row["statement"], row["keyword"], row["kind"], int(row["min"]) if row["min"] else None,
            int(row["max"]) if row["max"] else None, tuple(v for v in row["values"].split("|") if v),
            row["note"])
    return out


def _value(line: int, where: str, fact: Fact, value: str, problems: list[str]) -> None:
    if fact.values and value.upper() in fact.values:
        return
    if fact.kind == "int":
        if not value.isdigit():
            problems.append(f"line {line}: {where} {fact.keyword} {value!r} is not a number"
                            + (f" or {'|'.join(fact.values)}" if fact.values else ""))
        elif not (fact.low or 0) <= int(value) <= (fact.high if fact.high is not None else int(value)):
            problems.append(f"line {line}: {where} {fact.keyword} {value} is outside {fact.low}..{fact.high}")
    elif fact.kind == "enum":
        problems.append(f"line {line}: {where} {fact.keyword} {value!r}: allowed {'|'.join(fact.values)}")


def _after(words: list[str], *keyword: str) -> str | None:
    n = len(keyword)
    for i in range(len(words) - n):
        if [w.upper() for w in words[i:i + n]] == list(keyword):
            return words[i + n]
    return None


def _statement(line: int, text: str, version: str, facts, state: dict, problems: list[str]) -> bool:
    """Check one statement the Db2 chapter's validator does not know; False if this module does not know it either."""
    words = text.replace("(", " ( ").replace(")", " ) ").split()
    up = [w.upper() for w in words]
    if up[:2] in (["CREATE", "DATABASE"], ["CREATE", "DB"]):
        clauses = (("CODESET", _after(words, "CODESET")), ("AUTOMATIC STORAGE", _after(words, "AUTOMATIC", "STORAGE")))
        for key, value in clauses:
            fact = facts.get(("create-database", key))
            if value is not None and fact:
                _value(line, "CREATE DATABASE", fact, value, problems)
        return True
    if up[:2] == ["CREATE", "BUFFERPOOL"] and len(words) > 2:
        if not state["connected"]:
            problems.append(f"line {line}: CREATE BUFFERPOOL before CONNECT TO: "
                            "the CLP has no database to create it in")
        if "EXTENDED" in up:
            fact = facts[("create-bufferpool", "EXTENDED STORAGE")]
            if version != "8.2":
                why = fact.note.split(" (")[0]
                problems.append(f"line {line}: CREATE BUFFERPOOL: EXTENDED STORAGE no longer exists ({why})")
        for key in ("SIZE", "PAGESIZE"):
            value = _after(words, key)
            if value is not None:
                _value(line, "CREATE BUFFERPOOL", facts[("create-bufferpool", key)], value.upper(), problems)
        state["pools"][words[2].upper()] = PAGE.get((_after(words, "PAGESIZE") or "4K").upper(), 0)
        return True
    if up[:2] == ["CREATE", "TABLESPACE"] and len(words) > 2:
        if not state["connected"]:
            problems.append(f"line {line}: CREATE TABLESPACE before CONNECT TO: "
                            "the CLP has no database to create it in")
        page = (_after(words, "PAGESIZE") or "4K").upper()
        _value(line, "CREATE TABLESPACE", facts[("create-tablespace", "PAGESIZE")], page, problems)
        managed = " ".join(up[up.index("BY") + 1:up.index("BY") + 3]) if "BY" in up else ""
        managed = "AUTOMATIC STORAGE" if managed.startswith("AUTOMATIC") else managed.split(" ")[0]
        if managed:
            _value(line, "CREATE TABLESPACE", facts[("create-tablespace", "MANAGED BY")], managed, problems)
        if managed in ("SYSTEM", "DATABASE") and "USING" not in up:
            problems.append(f"line {line}: CREATE TABLESPACE MANAGED BY {managed} names no containers (USING ('path'))")
        deprecated = facts.get(("create-tablespace", "MANAGED BY SYSTEM"))
        if managed == "SYSTEM" and deprecated and deprecated.kind == "deprecated":
            problems.append(f"line {line}: CREATE TABLESPACE MANAGED BY SYSTEM: {deprecated.note}")
        pool = _after(words, "BUFFERPOOL")
        size = PAGE.get(page, 0)
        if pool is None and size != 4:
            problems.append(f"line {line}: CREATE TABLESPACE with PAGESIZE {page} names no BUFFERPOOL: the default "
                            "buffer pool IBMDEFAULTBP has 4 KB pages, so Db2 refuses it (SQL1582N)")
        elif pool is not None and pool.upper() in state["pools"] and state["pools"][pool.upper()] != size:
            problems.append(f"line {line}: table space page size {page} differs from buffer pool {pool}'s "
                            f"{state['pools'][pool.upper()]}K")
        elif pool is not None and pool.upper() not in state["pools"] and pool.upper() != "IBMDEFAULTBP":
            problems.append(f"line {line}: buffer pool {pool} is not created before the table space that uses it")
        return True
    if up[:3] in (["UPDATE", "DBM", "CFG"], ["UPDATE", "DBM", "CONFIGURATION"]) and "USING" in up:
        pairs = words[up.index("USING") + 1:]
        for key, value in zip(pairs[::2], pairs[1::2], strict=False):
            fact = facts.get(("dbm-cfg", key.upper()))
            if fact is None:
                problems.append(f"line {line}: UPDATE DBM CFG: unknown keyword {key!r}")
            else:
                _value(line, "UPDATE DBM CFG", fact, value, problems)
        return True
    return False


def validate(text: str, version: str) -> list[str]:
    """Problems in the LDAP database commands for Db2 ``version`` ("8.2", "9.7" or "current"); [] when fine."""
    facts = load_facts(version)
    clp_version = "current" if version == "current" else "9.7"
    parsed, _ = clp.commands(text, clp_version)
    problems: list[str] = []
    state = {"connected": False, "pools": {"IBMDEFAULTBP": 4}}
    handled: set[int] = set()
    for cmd in parsed:
        first = cmd.text.upper().split()
        if first[:2] == ["CONNECT", "RESET"] or first[:1] == ["TERMINATE"]:
            state["connected"] = False
        elif cmd.name == "connect":
            state["connected"] = True
        elif cmd.name == "alter-bufferpool" and not state["connected"]:
            problems.append(f"line {cmd.line}: ALTER BUFFERPOOL before CONNECT TO")
        if cmd.name in ("unknown", "dbm-cfg") and _statement(cmd.line, cmd.text, version, facts, state, problems):
            handled.add(cmd.line)
        if cmd.name in ("db-cfg", "db2set"):
            kind = "db-cfg" if cmd.name == "db-cfg" else "db2set"
            for key, value in cmd.params.items():
                fact = facts.get((kind, key))
                if fact:
                    _value(cmd.line, "UPDATE DB CFG" if kind == "db-cfg" else "db2set", fact, value, problems)
    for problem in clp.validate(text, clp_version):
        m, k = UNKNOWN.match(problem), UNKNOWN_KEY.match(problem)
        if m and int(m.group(1)) in handled:
            continue
        if k and (KIND[k.group(2)], k.group(3)) in facts:
            continue
        problems.append(problem)
    def order(p: str) -> tuple[int, str]:
        m = re.match(r"line (\d+)", p)
        return (int(m.group(1)) if m else 0, p)

    return sorted(set(problems), key=order)


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: the 2007 study's files (``-2007`` in the name) for DB2 8.2."""
    return validate(path.read_text(encoding="utf-8"), "8.2" if "-2007" in path.name else "current")
