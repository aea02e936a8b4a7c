"""Validator for WebSEAL configuration (stanza) files: ``webseald-<instance>.conf`` fragments.

The format (ISVA "Modifying the configuration file settings"): ``[stanza]`` headers, ``key = value`` entries,
``#`` starts a comment line. ``validate(text, clear_secrets=False)`` returns problems (empty when fine):

* an entry before any stanza header, a line that is neither header, entry nor comment;
* an unknown stanza or an unknown key in a known stanza (facts/webseal/webseald-stanzas.csv), with the
  closest known key offered, so a misspelt key is caught instead of being silently ignored by WebSEAL;
* a value of the wrong kind: yes/no, an absolute path, a label without blanks, a ``token:certificate`` label,
  a QoP level or a cipher name from facts/webseal/qop-ciphers.csv; a value that carries a note in
  parentheses or after ``#`` (WebSEAL reads the whole rest of the line as the value);
* a key given twice in a stanza where only one value counts;
* a secret (kind ``secret``) with a value in the file, unless ``clear_secrets`` (the 2007 study's form): the
  recommended configuration leaves passwords to the obfuscated database named in [configuration-database].

``entries(text)`` returns ``{(stanza, key): [values]}`` for cross-snippet checks (labels, library path).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import facts as facts_tables

FACTS_DIR = FACTS_ROOT / "webseal"
HEADER = re.compile(r"^\[([A-Za-z0-9:_.\-]+)\]$")
ENTRY = re.compile(r"^([A-Za-z0-9_.\-]+)\s*=\s*(.*)$")


def load_facts() -> dict[tuple[str, str], dict[str, str]]:
    return {(r["stanza"], r["key"]): r for r in facts_tables.load(FACTS_DIR / "webseald-stanzas.csv")}


def cipher_names() -> set[str]:
    return {r["name"] for r in facts_tables.load(FACTS_DIR / "qop-ciphers.csv")}


def parse(text: str) -> tuple[list[tuple[int, str, str, str]], list[str]]:
    """(line, stanza, key, value) for each entry, and the lines that could not be read."""
    out, problems, stanza = [], [], None
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if m := HEADER.match(line):
            stanza = m.group(1)
            continue
        if m := ENTRY.match(line):
            if stanza is None:
                problems.append(f"line {no}: '{m.group(1)}' stands before any [stanza] header, so WebSEAL "
                                "does not read it")
                continue
            out.append((no, stanza, m.group(1), m.group(2).strip()))
            continue
        problems.append(f"line {no}: neither a [stanza] header nor a 'key = value' entry: {line!r}")
    return out, problems


def entries(text: str) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for _no, stanza, key, value in parse(text)[0]:
        found.setdefault((stanza, key), []).append(value)
    return found


def _kind_problem(kind: str, values: str, value: str, ciphers: set[str]) -> str | None:
    allowed = [v for v in values.split("|") if v]
    if kind == "yesno" and value not in allowed:
        return f"is {value!r}, not yes or no"
    if kind == "path" and not value.startswith("/"):
        return f"is {value!r}, not an absolute path"
    if kind in ("label", "name") and not re.fullmatch(r"[A-Za-z0-9_.\-]+", value):
        return f"is {value!r}: a name without blanks or punctuation"
    if kind == "token-label" and not re.fullmatch(r"[A-Za-z0-9_.\-]+(:[A-Za-z0-9_.\-]+)?", value):
        return f"is {value!r}: a certificate label, or token_label:certificate_label, without blanks"
    if kind == "qop" and value not in allowed and value not in ciphers:
        return (f"is {value!r}: one level ({', '.join(allowed)}) or one GSKit cipher name per line")
    return None


def validate(text: str, clear_secrets: bool = False) -> list[str]:
    facts = load_facts()
    ciphers = cipher_names()
    stanzas = {s for s, _ in facts}
    parsed, problems = parse(text)
    seen: dict[tuple[str, str], int] = {}
    for no, stanza, key, value in parsed:
        if stanza not in stanzas:
            near = difflib.get_close_matches(stanza, stanzas, n=1)
            problems.append(f"line {no}: unknown stanza [{stanza}]" + (f" (did you mean [{near[0]}]?)" if near else ""))
            continue
        fact = facts.get((stanza, key))
        if fact is None:
            keys = [k for s, k in facts if s == stanza]
            near = difflib.get_close_matches(key, keys, n=1, cutoff=0.7)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            problems.append(f"line {no}: [{stanza}] has no key '{key}'{hint}: WebSEAL ignores it")
            continue
        if (stanza, key) in seen and fact["multi"] != "yes":
            problems.append(f"line {no}: [{stanza}] {key} given again (first on line {seen[(stanza, key)]}); "
                            "WebSEAL uses one of them")
        seen.setdefault((stanza, key), no)
        if re.search(r"\s#|\(|\)", value) or re.search(r"\s(or|and)\s", value):
            problems.append(f"line {no}: [{stanza}] {key} = {value!r}: a note or a choice inside the value; "
                            "WebSEAL reads the whole rest of the line")
            continue
        if fact["kind"] == "secret":
            if value and not clear_secrets:
                problems.append(f"line {no}: [{stanza}] {key} holds a password in clear text: leave it out of the "
                                "file and let the configuration tools store it in the obfuscated database")
            continue
        if (err := _kind_problem(fact["kind"], fact["values"], value, ciphers)) is not None:
            problems.append(f"line {no}: [{stanza}] {key} {err}")
    return problems


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: the runbook's own webseald.conf (no password in clear text)."""
    return validate(path.read_text(encoding="utf-8"))
