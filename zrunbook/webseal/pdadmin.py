"""Validator for the pdadmin commands in the WebSEAL chapter's shell snippets.

pdadmin (IBM Security Verify Access / Tivoli Access Manager) cannot be installed on the runbook's hosts, so
the snippets are read. ``commands(text)`` finds the pdadmin commands of a shell script: the lines of a here
document fed to pdadmin (or to a function whose name contains "pdadmin"), the words after
``pdadmin [-a ID] [-p PASSWORD]`` on a command line, and the ``login`` line a snippet prints into pdadmin.
Variables are expanded with the snippet's own defaults (the IHS chapter's ``gskit.defaults``/``expand``); a
variable only the environment sets becomes ``<NAME>``.

``validate(text)`` checks each command against facts/webseal/pdadmin-commands.csv: the forms
``login``, ``server task SERVER create|list``, ``acl create|modify|attach|show``; junction options, their
values and the required ones (``-t`` and, except for local junctions, ``-h``), one junction point starting
with ``/``; ACL entries (group/user NAME PERMS, any-other/unauthenticated PERMS) with known action letters;
``acl attach`` with exactly an object and an ACL. A password (``-p``) must come from the environment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import facts as facts_tables
from zrunbook import shell
from zrunbook.formats.gskit import defaults, expand

FACTS = FACTS_ROOT / "webseal" / "pdadmin-commands.csv"
HEREDOC = re.compile(r"<<-?\s*'?\"?([A-Za-z_][A-Za-z0-9_]*)'?\"?")
LOGIN_PRINTF = re.compile(r"printf\s+'(login [^'\\]*)\\n'")


@dataclass
class Command:
    line: int
    words: list[str]  # expanded
    raw: list[str]  # as written


def load_facts() -> dict[str, dict[str, dict[str, str]]]:
    facts: dict[str, dict[str, dict[str, str]]] = {}
    for row in facts_tables.load(FACTS):
        facts.setdefault(row["command"], {})[row["option"]] = row
    return facts


def _split(line: str) -> list[str]:
    try:
        return shell.words(line)
    except ValueError:
        return line.split()


def commands(text: str) -> list[Command]:
    env = defaults(text)
    found: list[Command] = []
    # pdadmin [-a ID] [-p PASSWORD] [-d DOMAIN] [command ...], anywhere in a pipeline
    for cmd in shell.commands(text):
        if cmd.name != "pdadmin":
            continue
        rest, login = cmd.args, []
        while rest and rest[0] in ("-a", "-p", "-d") and len(rest) > 1:
            login += rest[:2]
            rest = rest[2:]
        if login:
            found.append(Command(cmd.line, ["login"] + [expand(t, env) for t in login], ["login"] + login))
        if rest:
            found.append(Command(cmd.line, [expand(t, env) for t in rest], rest))
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if (m := LOGIN_PRINTF.search(line)) and "pdadmin" in line:
            raw = m.group(1).replace("%s", "$PDADMIN_PASSWORD").split()
            found.append(Command(i + 1, [expand(t, env) for t in raw], raw))
        if (m := HEREDOC.search(line)) and "pdadmin" in line:  # the document's lines are pdadmin commands
            end = m.group(1)
            i += 1
            while i < len(lines) and lines[i].strip() != end:
                raw = _split(lines[i])
                if raw:
                    found.append(Command(i + 1, [expand(t, env) for t in raw], raw))
                i += 1
        i += 1
    return sorted(found, key=lambda c: c.line)


def _secret_from_env(raw: str) -> bool:
    return bool(re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", raw))


def _options(where: str, args: list[str], raw: list[str], rows: dict[str, dict[str, str]], problems: list[str]):
    seen: dict[str, str | None] = {}
    positional: list[str] = []
    i = 0
    while i < len(args):
        opt = args[i]
        if not opt.startswith("-"):
            positional.append(opt)
            i += 1
            continue
        row = rows.get(opt)
        if row is None:
            problems.append(f"{where}: unknown option {opt}")
            i += 1
            continue
        if row["kind"] == "flag":
            seen[opt] = None
            i += 1
            continue
        if i + 1 >= len(args) or (args[i + 1].startswith("-") and row["kind"] != "secret"):
            problems.append(f"{where}: option {opt} needs a value")
            seen[opt] = None
            i += 1
            continue
        value = args[i + 1]
        seen[opt] = value
        if row["kind"] == "secret" and not _secret_from_env(raw[i + 1] if i + 1 < len(raw) else ""):
            problems.append(f"{where}: {opt} must come from an environment variable, not {raw[i + 1]!r}")
        elif row["kind"] == "enum" and value not in row["values"].split("|"):
            problems.append(f"{where}: {opt} {value!r}: allowed {row['values'].replace('|', ', ')}")
        elif row["kind"] == "port" and not (value.isdigit() and 1 <= int(value) <= 65535) and "<" not in value:
            problems.append(f"{where}: {opt} {value!r} is not a port number")
        elif row["kind"] == "list" and any(v not in row["values"].split("|") for v in value.split(",")):
            problems.append(f"{where}: {opt} {value!r}: allowed {row['values'].replace('|', ', ')}")
        elif row["kind"] == "host" and not re.fullmatch(r"[A-Za-z0-9.\-<>_]+", value):
            problems.append(f"{where}: {opt} {value!r} is not a host name or address")
        i += 2
    return seen, positional


def _check(cmd: Command, facts, problems: list[str]) -> None:
    w, where = cmd.words, f"line {cmd.line}: {' '.join(cmd.words[:3])}"
    if w[0] == "login":
        seen, extra = _options(where, w[1:], cmd.raw[1:], facts["login"], problems)
        for opt, row in facts["login"].items():
            if row["required"] == "yes" and opt not in seen:
                problems.append(f"{where}: {opt} is required")
        if extra:
            problems.append(f"{where}: unexpected {' '.join(extra)!r}")
    elif w[:2] == ["server", "task"]:
        if len(w) < 4 or not re.fullmatch(r"[A-Za-z0-9_.<>\-]+-webseald-[A-Za-z0-9_.<>\-]+", w[2]):
            problems.append(f"{where}: the server name must have the form instance-webseald-host (see 'server list')")
            return
        action = w[3]
        if action == "list":
            if len(w) > 4:
                problems.append(f"{where}: list takes no arguments")
        elif action == "create":
            rows = facts["server task create"]
            seen, points = _options(where, w[4:], cmd.raw[4:], rows, problems)
            if "-t" not in seen:
                problems.append(f"{where}: -t (junction type) is required")
            if seen.get("-t") != "local" and "-h" not in seen:
                kind = seen.get("-t") or "non-local"
                problems.append(f"{where}: -h (back-end host) is required for a {kind} junction")
            if seen.get("-t") == "local" and "-d" not in seen:
                problems.append(f"{where}: a local junction needs -d (its directory)")
            if len(points) != 1 or not points[0].startswith("/"):
                problems.append(f"{where}: needs exactly one junction point starting with '/', got {points or 'none'}")
        else:
            problems.append(f"{where}: server task action {action!r} is not one this runbook uses (create, list)")
    elif w[0] == "acl" and len(w) >= 2:
        action, args = w[1], w[2:]
        if action in ("create", "show"):
            if len(args) != 1:
                problems.append(f"{where}: acl {action} takes one ACL name")
        elif action == "attach":
            if len(args) != 2 or not args[0].startswith("/"):
                problems.append(f"{where}: acl attach takes a protected object (starting with '/') and an ACL name, "
                                f"got {len(args)} arguments: {' '.join(args)}")
        elif action == "modify":
            rows = facts["acl modify set"]
            if len(args) < 4 or args[1] != "set":
                problems.append(f"{where}: expected acl modify ACL set ENTRY [NAME] PERMS")
                return
            entry = args[2].lower()
            kinds = rows["entry"]["values"].split("|")
            if entry not in kinds:
                problems.append(f"{where}: ACL entry {args[2]!r}: allowed {', '.join(kinds)}")
                return
            need = 5 if entry in ("group", "user") else 4
            if len(args) != need:
                problems.append(f"{where}: 'set {entry}' takes {'a name and ' if need == 5 else ''}permissions")
                return
            perms = args[-1]
            letters = set(rows["perms"]["values"].split("|"))
            bad = sorted({c for c in perms if c not in letters})
            if bad:
                problems.append(f"{where}: unknown action letters {''.join(bad)!r} in {perms!r}")
            if len(set(perms)) != len(perms):
                problems.append(f"{where}: repeated action letters in {perms!r}")
        else:
            problems.append(f"{where}: acl action {action!r} is not one this runbook uses")
    else:
        problems.append(f"{where}: not a pdadmin command this runbook uses")


def validate(text: str) -> list[str]:
    facts = load_facts()
    problems: list[str] = []
    for cmd in commands(text):
        _check(cmd, facts, problems)
    return problems


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: a snippet of this kind that calls no pdadmin command is a problem too."""
    text = path.read_text(encoding="utf-8")
    return validate(text) if commands(text) else ["no pdadmin command found"]
