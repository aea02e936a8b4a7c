"""Validator for CICS Transaction Gateway's ``ctg.ini`` (the SSL settings this runbook shows).

``validate(text, clear_secrets=False)`` returns problems (empty when fine):

* structure: ``SECTION NAME`` ... ``ENDSECTION`` pairs, no section opened inside another, none left open at
  the end, entries only inside a section;
* continuation lines: a line ending with ``\\`` continues on the next, and may be split only after a ``;``
  (the documented rule); a continuation at the end of the file is an error;
* keys known for their section (facts/ctg/ctg-ini-keys.csv), ``on``/``off`` values, the handler
  class; ``protocol@ssl.parameters`` only with ``protocol@ssl.handler``;
* the SSL handler's parameters (ssl-parameters.csv): known names, port and numbers, ``clientauth``; the
  key ring parameters there are deprecated (CTG8483W); every name in ``ciphersuites`` must be a known JSSE
  cipher suite: the WAS chapter's facts/was/cipher-suites.csv plus the study's names in
  facts/ctg/ctg-ciphers.csv;
* a key ring password in the file (unless ``clear_secrets``).

``entries(text)`` returns ``{(section, key): value}`` with continuation lines joined.
"""

from __future__ import annotations

import re
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import facts as facts_tables
from zrunbook import shell

HERE = FACTS_ROOT / "ctg"
WAS_CIPHERS = FACTS_ROOT / "was" / "cipher-suites.csv"


def cipher_names() -> set[str]:
    return {r["suite"] for path in (WAS_CIPHERS, HERE / "ctg-ciphers.csv") for r in facts_tables.load(path)}


def logical_lines(text: str) -> tuple[list[tuple[int, str]], list[str]]:
    """Lines joined at a trailing backslash, without blanks; problems where a line is split not after ';'."""
    out, problems = [], []
    for line in shell.logical_lines(text, joiner="", strip=True):
        for no, body in line.breaks:
            if not body.endswith(";"):
                problems.append(f"line {no}: a line may be split only after a ';' (here before {body[-20:]!r})")
        if line.unfinished:
            problems.append(f"line {line.line}: the last line ends with '\\' but nothing follows")
        out.append((line.line, line.text))
    return out, problems


def parse(text: str) -> tuple[list[tuple[int, str, str, str]], list[str]]:
    lines, problems = logical_lines(text)
    section, opened, entries = None, 0, []
    for no, line in lines:
        if not line or line.startswith("#"):
            continue
        if m := re.fullmatch(r"SECTION\s+(\S+)(?:\s+.*)?", line):
            if section is not None:
                problems.append(f"line {no}: SECTION {m.group(1)} opens inside SECTION {section} "
                                f"(line {opened}), which has no ENDSECTION")
            section, opened = m.group(1).upper(), no
            continue
        if line == "ENDSECTION":
            if section is None:
                problems.append(f"line {no}: ENDSECTION without a SECTION")
            section = None
            continue
        if section is None:
            problems.append(f"line {no}: {line[:40]!r} stands outside any SECTION")
            continue
        if "=" not in line:
            problems.append(f"line {no}: not a key=value entry: {line!r}")
            continue
        key, value = line.split("=", 1)
        entries.append((no, section, key.strip(), value.strip()))
    if section is not None:
        problems.append(f"line {opened}: SECTION {section} has no ENDSECTION")
    return entries, problems


def entries(text: str) -> dict[tuple[str, str], str]:
    return {(s, k): v for _n, s, k, v in parse(text)[0]}


def _ssl_parameters(no: int, value: str, problems: list[str]) -> None:
    facts = {r["parameter"]: r for r in facts_tables.load(HERE / "ssl-parameters.csv")}
    ciphers = cipher_names()
    if not value.endswith(";"):
        problems.append(f"line {no}: protocol@ssl.parameters should end with ';'")
    for item in (p.strip() for p in value.split(";") if p.strip()):
        name, _, val = item.partition("=")
        fact = facts.get(name)
        if fact is None:
            problems.append(f"line {no}: unknown SSL handler parameter {name!r}")
        elif fact["kind"] == "deprecated":
            problems.append(f"line {no}: SSL handler parameter {name} is deprecated: {fact['note']}")
        elif fact["kind"] == "flag" and val:
            problems.append(f"line {no}: {name} takes no value")
        elif fact["kind"] == "onoff" and val not in ("on", "off"):
            problems.append(f"line {no}: {name}={val!r}: on or off")
        elif fact["kind"] in ("int", "port") and not val.isdigit():
            problems.append(f"line {no}: {name}={val!r} is not a number")
        elif fact["kind"] == "port" and not 1 <= int(val) <= 65535:
            problems.append(f"line {no}: port {val} is outside 1..65535")
        elif fact["kind"] == "ciphers":
            for suite in (c.strip() for c in val.split(",")):
                if suite not in ciphers:
                    problems.append(f"line {no}: unknown cipher suite {suite!r} in ciphersuites")


def validate(text: str, clear_secrets: bool = False) -> list[str]:
    facts = {(r["section"], r["key"]): r for r in facts_tables.load(HERE / "ctg-ini-keys.csv")}
    parsed, problems = parse(text)
    keys = {(s, k) for _n, s, k, _v in parsed}
    for no, section, key, value in parsed:
        fact = facts.get((section, key))
        if fact is None:
            problems.append(f"line {no}: SECTION {section} has no key {key!r}")
            continue
        kind = fact["kind"]
        if kind == "onoff" and value not in ("on", "off"):
            problems.append(f"line {no}: {key}={value!r}: on or off")
        elif kind == "class" and value != fact["values"]:
            problems.append(f"line {no}: {key} names {value!r}, not {fact['values']}")
        elif kind == "secret" and value and not clear_secrets:
            problems.append(f"line {no}: {key} holds a password in clear text")
        elif kind == "params" and key == "protocol@ssl.parameters":
            _ssl_parameters(no, value, problems)
            if (section, "protocol@ssl.handler") not in keys:
                problems.append(f"line {no}: protocol@ssl.parameters without protocol@ssl.handler: "
                                "no SSL protocol handler is started")
    return problems


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point."""
    return validate(path.read_text(encoding="utf-8"))
