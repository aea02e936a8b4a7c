"""Db2 CLP validator: the commands this runbook uses, their keywords and value ranges.

``validate(text, version)`` returns a list of problems (empty when the text is fine) for:

* a CLP script run with ``db2 -tvf file.clp``: statements end with ``;`` and may span lines;
  without any ``;`` the file is read as ``db2 -vf`` reads it, one statement per line, a line ending
  with ``\\`` continued on the next;
* a shell script (first line ``#!``) calling ``db2 "..."`` and ``db2set VAR=VALUE``; lines continue
  only with a trailing ``\\``.

``version`` is ``"9.7"`` (the 2013 study) or ``"current"`` (11.5 / 12.1). Keywords, ranges and allowed
values come from ``facts/db2/clp-keywords.csv`` (the reference page renders the same file).
Known commands: UPDATE DB CFG, UPDATE DBM CFG, AUTOCONFIGURE, ALTER BUFFERPOOL, CONNECT TO / CONNECT RESET,
TERMINATE and db2set; anything else is reported as unknown, so a new command needs new facts first.
A fixed ALTER BUFFERPOOL size after AUTOCONFIGURE ... bp_resizeable yes in the same script is reported
(the fixed size switches the self-tuning off again).
Circular logging is assumed for the log ranges (the study's setup).

``commands(text)`` returns the parsed commands (for computed values such as the total log space).
The module is importable on its own: the WebSEAL chapter reuses it for its LDAP database commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import clidriver, shell
from zrunbook import facts as facts_tables

FACTS = FACTS_ROOT / "db2" / "clp-keywords.csv"
VERSIONS = ("9.7", "current")
CFG = ("CFG", "CONFIG", "CONFIGURATION")


@dataclass
class Command:
    line: int  # first line of the command in the text (1-based)
    text: str  # the command as the CLP sees it, one line
    name: str = ""  # "db-cfg", "autoconfigure", "alter-bufferpool", "db2set", "connect", ...
    target: str = ""  # database or buffer pool name
    params: dict[str, str] = field(default_factory=dict)  # keyword (upper case) -> value


@dataclass(frozen=True)
class Fact:
    command: str
    keyword: str
    kind: str
    min: int | None
    max: int | None
    values: tuple[str, ...]
    gskit_refused: tuple[tuple[str, str], ...] = ()  # (value, GSKit's error) from the gskit_8_0_60 column


def gskit_refused(cell: str) -> tuple[tuple[str, str], ...]:
    """``NAME verdict; TLSV1/tls10 verdict; ...`` -> the (NAME, error) pairs where the verdict is GSKit's error (it
    starts with GSKit's return code); checks/standins/ihs/gskit_verdicts.py records the column and a check reruns it."""
    found = []
    for part in cell.split(";"):
        name, _, verdict = part.strip().partition(" ")
        if verdict[:1].isdigit():
            found.append((name.split("/")[0].upper(), verdict))
    return tuple(found)


def load_facts(version: str, path: Path = FACTS) -> dict[tuple[str, str], Fact]:
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, not {version!r}")
    facts: dict[tuple[str, str], Fact] = {}
    for row in facts_tables.load(path, "db2/clp-keywords"):
        if row["version"] not in ("all", version):
            continue
        key = (row["command"], row["keyword"].upper())
        facts[key] = Fact(
            row["command"], row["keyword"].upper(), row["kind"],
            int(row["min"]) if row["min"] else None, int(row["max"]) if row["max"] else None,
            tuple(v.upper() for v in row["values"].split("|") if v), gskit_refused(row["gskit_8_0_60"]),
        )
    return facts


# --- splitting text into commands --------------------------------------------------------------------

def _clp_statements(text: str) -> tuple[list[tuple[int, str]], list[str]]:
    problems: list[str] = []
    lines = [(no, re.sub(r"--.*$", "", line)) for no, line in enumerate(text.splitlines(), 1)]
    terminated = any(line.rstrip().endswith(";") for _, line in lines)
    if not terminated:  # db2 -vf: one statement per line, backslash continues
        body = "\n".join(line for _, line in lines)
        return [(line.line, line.text.strip()) for line in shell.logical_lines(body) if line.text.strip()], problems
    statements, buf, start = [], "", 0
    for no, line in lines:
        if not line.strip():
            continue
        if not buf:
            start = no
        buf += " " + line.strip()
        while ";" in buf:
            head, buf = buf.split(";", 1)
            if head.strip():
                statements.append((start, head.strip()))
            start = no
    if buf.strip():
        problems.append(f"line {start}: statement is not terminated with ';' (db2 -tvf would not run it)")
    return statements, problems


# Words that begin a continuation of a db2 command (keywords and parameters): on a line of their own
# in a shell script they mean a command was split without a backslash.
def _continuation_words(facts) -> set[str]:
    return {kw.lower() for (_, kw) in facts if kw.isidentifier()} | {"apply", "using", "size"}


def _shell_commands(text: str, facts) -> tuple[list[tuple[int, str, str]], list[str]]:
    """(line, tool, command text) for every db2/db2set call; problems for lines that look split."""
    script = shell.parse(text)
    problems = [f"line {u.line}: cannot be parsed as shell ({u.error})" for u in script.unparsable]
    found: list[tuple[int, str, str]] = []
    words = _continuation_words(facts)
    for cmd in script.commands:
        no, tool = cmd.line, cmd.words[0]
        if tool == "db2":
            args = cmd.args
            while args and re.fullmatch(r"[-+][a-zA-Z]+", args[0]):
                args = args[1:]
            if not args:
                problems.append(f"line {no}: db2 without a command")
                continue
            found.append((no, "db2", " ".join(args)))
        elif tool == "db2set":
            found.append((no, "db2set", " ".join(cmd.args)))
        elif tool.lower() in words:
            problems.append(f"line {no}: {cmd.text!r} continues the command above, but that line does not end "
                            "with '\\' (the shell runs it as a command of its own)")
    return found, sorted(problems, key=_line_number)


def _line_number(problem: str) -> int:
    return int(re.match(r"line (\d+)", problem).group(1))


# --- parsing one command ------------------------------------------------------------------------------

def _pairs(tokens: list[str], no: int, what: str, problems: list[str]) -> dict[str, str]:
    if len(tokens) % 2:
        problems.append(f"line {no}: {what}: keyword {tokens[-1]!r} has no value")
        tokens = tokens[:-1]
    if not tokens:
        problems.append(f"line {no}: {what}: USING names no keyword")
    return {tokens[i].upper(): tokens[i + 1] for i in range(0, len(tokens), 2)}


def _using(tokens: list[str], i: int, no: int, what: str, problems: list[str]) -> dict[str, str]:
    """The keyword value pairs after USING at tokens[i] of an UPDATE ... CFG command (IMMEDIATE/DEFERRED dropped)."""
    if [t.upper() for t in tokens[i:i + 1]] != ["USING"]:
        problems.append(f"line {no}: {what} needs USING keyword value pairs")
    pairs = tokens[i + 1:]
    if pairs and pairs[-1].upper() in ("IMMEDIATE", "DEFERRED"):
        pairs = pairs[:-1]
    return _pairs(pairs, no, what, problems)


def parse_command(no: int, text: str, problems: list[str]) -> Command:
    cmd = Command(no, text)
    tokens = text.split()
    up = [t.upper() for t in tokens]
    if up[:2] == ["CONNECT", "TO"] and len(up) >= 3:
        cmd.name, cmd.target = "connect", tokens[2]
    elif up in (["CONNECT", "RESET"], ["TERMINATE"]):
        cmd.name = up[0].lower()
    elif (up[:2] == ["UPDATE", "DBM"] or up[:4] in (["UPDATE", "DB", "MANAGER", w] for w in CFG)
          or up[:4] in (["UPDATE", "DATABASE", "MANAGER", w] for w in CFG)):
        i = 3 if up[1] == "DBM" else 4
        if up[1] == "DBM" and up[2:3] not in ([w] for w in CFG):
            problems.append(f"line {no}: UPDATE DBM needs CFG")
        cmd.name, cmd.params = "dbm-cfg", _using(tokens, i, no, "UPDATE DBM CFG", problems)
    elif up[:1] == ["UPDATE"] and len(up) > 2 and up[1] in ("DB", "DATABASE"):
        if up[2] in CFG:
            i = 3
            if up[i:i + 1] == ["FOR"]:
                cmd.target, i = tokens[i + 1] if len(tokens) > i + 1 else "", i + 2
            cmd.name, cmd.params = "db-cfg", _using(tokens, i, no, "UPDATE DB CFG", problems)
        else:
            cmd.name = "unknown"
    elif up[:1] == ["AUTOCONFIGURE"]:
        cmd.name = "autoconfigure"
        try:
            apply_at = up.index("APPLY")
        except ValueError:
            problems.append(f"line {no}: AUTOCONFIGURE has no APPLY clause (DB ONLY, DB AND DBM or NONE)")
            apply_at = len(up)
        using = tokens[1:apply_at]
        if using and using[0].upper() == "USING":
            cmd.params = _pairs(using[1:], no, "AUTOCONFIGURE", problems)
        elif using:
            problems.append(f"line {no}: AUTOCONFIGURE: expected USING, found {using[0]!r}")
        if apply_at < len(up):
            apply = " ".join(up[apply_at + 1:])
            apply = re.sub(r"\s+ON CURRENT (NODE|MEMBER)$", "", apply)
            cmd.params["APPLY"] = apply
    elif up[:2] == ["ALTER", "BUFFERPOOL"] and len(up) >= 3:
        cmd.name, cmd.target = "alter-bufferpool", tokens[2]
        rest = up[3:]
        if rest[:1] in (["IMMEDIATE"], ["DEFERRED"]):
            cmd.params["MODE"], rest = rest[0], rest[1:]
        if rest[:1] in (["MEMBER"], ["DBPARTITIONNUM"]) and len(rest) >= 2:
            cmd.params["MEMBER"], rest = rest[1], rest[2:]
        if rest[:1] != ["SIZE"] or len(rest) < 2:
            problems.append(f"line {no}: ALTER BUFFERPOOL: this validator knows only the SIZE clause")
        else:
            cmd.params["SIZE"] = rest[1]
            extra = rest[2:]
            if extra == ["AUTOMATIC"] and rest[1] != "AUTOMATIC":
                cmd.params["AUTOMATIC"] = "YES"
            elif extra:
                problems.append(f"line {no}: ALTER BUFFERPOOL: unexpected {' '.join(extra)!r} after SIZE")
    else:
        cmd.name = "unknown"
    if cmd.name == "unknown":
        problems.append(f"line {no}: unknown command {text!r} (not in this validator's facts)")
    return cmd


def _check_value(no: int, where: str, fact: Fact, value: str, problems: list[str]) -> None:
    if fact.values and value.upper() in fact.values:
        return
    if fact.kind == "int":
        try:
            number = int(value)
        except ValueError:
            allowed = f" or {'|'.join(fact.values)}" if fact.values else ""
            problems.append(f"line {no}: {where} {fact.keyword}: {value!r} is not a number{allowed}")
            return
        low = fact.min if fact.min is not None else float("-inf")
        high = fact.max if fact.max is not None else float("inf")
        if not low <= number <= high:
            problems.append(f"line {no}: {where} {fact.keyword} {number} is outside "
                            f"{fact.min if fact.min is not None else ''}..{fact.max if fact.max is not None else ''}")
    elif fact.kind == "enum":
        problems.append(f"line {no}: {where} {fact.keyword}={value!r}: allowed {'|'.join(fact.values)}")
    elif fact.kind == "list":  # comma-separated, no blanks (a blank would end the value in the CLP)
        items = value.upper().split(",")
        unknown = [item for item in items if item not in fact.values]
        if "" in items:
            problems.append(f"line {no}: {where} {fact.keyword} {value!r}: an empty item (a doubled or trailing comma)")
        for item in unknown:
            if item:
                problems.append(f"line {no}: {where} {fact.keyword}: {item!r} is not one of {'|'.join(fact.values)}")
        for item, error in fact.gskit_refused:
            if item in items:
                problems.append(f"line {no}: {where} {fact.keyword}: GSKit {clidriver.GSKIT} refuses {item!r} "
                                f"({error}, facts/db2/clp-keywords.csv)")
        if len(set(items)) != len(items):
            problems.append(f"line {no}: {where} {fact.keyword} {value!r} names an item twice")
    elif fact.kind == "path":
        if not re.match(r"(/|\$HOME/|\$\{HOME\}/)", value):  # $HOME: a shell script's double quotes expand it
            problems.append(f"line {no}: {where} {fact.keyword} {value!r} is not an absolute path")
    elif fact.kind == "port":
        if value.isdigit() and not 1 <= int(value) <= 65535:
            problems.append(f"line {no}: {where} {fact.keyword} {value} is not a TCP port (1..65535)")
        elif not value.isdigit() and not re.fullmatch(r"[A-Za-z][\w.-]*", value):
            problems.append(f"line {no}: {where} {fact.keyword} {value!r} is neither a port nor a service name")
    elif fact.kind == "label" and not value.strip():
        problems.append(f"line {no}: {where} {fact.keyword} is empty")


def _check(cmd: Command, facts, problems: list[str]) -> None:
    where = {"db-cfg": "UPDATE DB CFG", "dbm-cfg": "UPDATE DBM CFG", "autoconfigure": "AUTOCONFIGURE",
             "db2set": "db2set", "alter-bufferpool": "ALTER BUFFERPOOL"}.get(cmd.name)
    if where is None:
        return
    for keyword, value in cmd.params.items():
        if cmd.name == "alter-bufferpool" and keyword != "SIZE":
            continue
        fact = facts.get((cmd.name, keyword))
        if fact is None:
            problems.append(f"line {cmd.line}: {where}: unknown keyword {keyword!r}")
            continue
        _check_value(cmd.line, where, fact, value, problems)
    if cmd.name == "autoconfigure" and "APPLY" not in cmd.params:
        pass  # reported while parsing


def commands(text: str, version: str = "current") -> tuple[list[Command], list[str]]:
    """Parse text (CLP script or shell script) into commands; second item: the problems found so far."""
    facts = load_facts(version)
    problems: list[str] = []
    parsed: list[Command] = []
    if text.startswith("#!"):
        calls, problems = _shell_commands(text, facts)
        for no, tool, body in calls:
            if tool == "db2set":
                args = body.split()
                while args and args[0].startswith("-"):  # -all, -g, -i INSTANCE, -lr ...
                    args = args[2:] if args[0] in ("-i", "-r", "-n", "-u", "-p") else args[1:]
                if not args:
                    continue  # a query such as db2set -all
                if len(args) != 1 or "=" not in args[0]:
                    problems.append(f"line {no}: db2set expects one VARIABLE=VALUE, got {body!r}")
                    continue
                var, value = args[0].split("=", 1)
                parsed.append(Command(no, f"db2set {body}", "db2set", "", {var.upper(): value}))
            else:
                parsed.append(parse_command(no, body, problems))
    else:
        statements, problems = _clp_statements(text)
        words = _continuation_words(facts)
        for no, statement in statements:
            first = statement.split()[0].lower()
            if first in words:
                problems.append(f"line {no}: {statement!r} continues the statement above, but without ';' "
                                "terminators each line is a statement of its own: end the line above with '\\' "
                                "or end statements with ';' and run db2 -tvf")
                continue
            parsed.append(parse_command(no, statement, problems))
    return parsed, problems


def validate(text: str, version: str, facts_path: Path = FACTS) -> list[str]:
    """Problems in a CLP or shell script for Db2 `version` ("9.7" or "current"); [] when it is fine. facts_path: the
    keywords table (another for a negative case)."""
    facts = load_facts(version, facts_path)
    parsed, problems = commands(text, version)
    for cmd in parsed:
        _check(cmd, facts, problems)
    total = facts.get(("db-cfg", "LOGPRIMARY+LOGSECOND"))
    settings = db_cfg(parsed)
    for db, params in settings.items():
        try:
            primary, second = int(params.get("LOGPRIMARY", "0")), int(params.get("LOGSECOND", "0"))
        except ValueError:
            continue
        if total and total.max is not None and second != -1 and primary + second > total.max:
            problems.append(f"database {db or '(default)'}: LOGPRIMARY {primary} + LOGSECOND {second} = "
                            f"{primary + second} exceeds {total.max} (circular logging)")
    problems += resizeable_then_fixed(parsed)
    problems += tls_settings(parsed)
    return problems


TLS_NEEDS = ("SSL_SVR_KEYDB", "SSL_SVR_STASH", "SSL_SVCENAME")


def tls_settings(parsed: list[Command]) -> list[str]:
    """The instance's TLS settings hold together: DB2COMM with SSL needs the key database, its stash and the TLS
    port in the same script, and the TLS port is not the unencrypted one (Db2 would not start its listeners:
    'Configuring TLS support in a Db2 instance', SSEPGG 11.5)."""
    dbm: dict[str, tuple[int, str]] = {}
    comm = None
    for cmd in parsed:
        if cmd.name == "dbm-cfg":
            dbm.update({k: (cmd.line, v) for k, v in cmd.params.items()})
        elif cmd.name == "db2set" and "DB2COMM" in cmd.params:
            comm = (cmd.line, cmd.params["DB2COMM"].upper().split(","))
    problems = []
    if comm and "SSL" in comm[1]:
        missing = [k for k in TLS_NEEDS if k not in dbm]
        if missing:
            problems.append(f"line {comm[0]}: DB2COMM includes SSL, but the script does not set {', '.join(missing)}")
    if "SSL_SVCENAME" in dbm and "SVCENAME" in dbm and dbm["SSL_SVCENAME"][1] == dbm["SVCENAME"][1]:
        problems.append(f"line {dbm['SSL_SVCENAME'][0]}: SSL_SVCENAME {dbm['SSL_SVCENAME'][1]} is SVCENAME's port too: "
                        "the TLS and the unencrypted listener need ports of their own")
    return problems


def resizeable_then_fixed(parsed: list[Command]) -> list[str]:
    """A fixed ALTER BUFFERPOOL ... SIZE n after AUTOCONFIGURE ... bp_resizeable yes in the same script.

    The fixed size ends the self-tuning the Configuration Advisor was asked to allow ("if the buffer pool is
    already self-tuning and SIZE number-of-pages is given, the alter disables self-tuning": ALTER BUFFERPOOL,
    https://www.ibm.com/docs/en/SSEPGG_11.5.0/com.ibm.db2.luw.sql.ref.doc/doc/r0000885.html).
    """
    problems: list[str] = []
    resizeable = None
    for cmd in parsed:
        if cmd.name == "autoconfigure" and cmd.params.get("BP_RESIZEABLE", "").upper() == "YES":
            resizeable = cmd.line
        size = cmd.params.get("SIZE", "")
        if (resizeable and cmd.name == "alter-bufferpool" and size.isdigit()
                and cmd.params.get("AUTOMATIC") != "YES"):
            problems.append(f"line {cmd.line}: ALTER BUFFERPOOL {cmd.target} SIZE {size} fixes the size after "
                            f"AUTOCONFIGURE ... bp_resizeable yes (line {resizeable}): the fixed size switches "
                            "the pool's self-tuning off again (SIZE AUTOMATIC keeps it, bp_resizeable no says so)")
    return problems


def db_cfg(parsed: list[Command]) -> dict[str, dict[str, str]]:
    """The database configuration a script leaves, per database (upper case), later values winning."""
    out: dict[str, dict[str, str]] = {}
    for cmd in parsed:
        if cmd.name == "db-cfg":
            out.setdefault(cmd.target.upper(), {}).update(cmd.params)
    return out


def study_version(path: Path) -> str:
    """The Db2 version a file is written for: the 2013 study's files (``-2013``, ``-9.7`` in the name) 9.7."""
    return "9.7" if "-2013" in path.name or "-9.7" in path.name else "current"


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: ``validate`` for the version the file's name says."""
    return validate(path.read_text(encoding="utf-8"), study_version(path))
