"""Liberty's jdk.tls.namedGroups against what its JDK does (facts/was/jdk-tls-groups.csv, sourced).

jvm.options pins jdk.tls.namedGroups, which replaces JSSE's default list. ``file_problems`` is the jdk-groups
checker's validator: on the JDK that runs Liberty here (OpenJDK 21, no hybrid group in JSSE) the list must name only
groups that JDK has, and once the file says its JDK is one whose JSSE knows X25519MLKEM768, that group must come
first. The file names its JDK in a ``# JDK: <version>`` line, or OpenJDK 21 (what ran here) is assumed.
"""

from __future__ import annotations

import re
from pathlib import Path

from zrunbook import facts as facts_tables

TABLE = "was/jdk-tls-groups"
HYBRID = "X25519MLKEM768"
RAN_HERE = "21"
CLASSICAL = {"x25519", "x448", "secp256r1", "secp384r1", "secp521r1", "ffdhe2048", "ffdhe3072", "ffdhe4096",
             "ffdhe6144", "ffdhe8192"}  # JSSE's classical named groups (JEP 527's default list)
_GROUPS = re.compile(r"^-Djdk\.tls\.namedGroups=(\S+)$", re.M)
_JDK = re.compile(r"^#\s*JDK:\s*(\d+)", re.M)


def jdk_row(version: str) -> dict:
    rows = [r for r in facts_tables.table(TABLE) if r["version"] == version]
    if not rows:
        raise ValueError(f"no JDK {version} in facts/{TABLE}.csv")
    return rows[0]


def groups_problems(groups: list[str], jdk: str) -> list[str]:
    knows_hybrid = not jdk_row(jdk)["hybrid groups in JSSE (TLS 1.3)"].startswith("none")
    lower = [g.lower() for g in groups]
    out = [f"{g} is no named group JSSE of OpenJDK {jdk} has" for g in groups
           if g.lower() not in CLASSICAL and not (knows_hybrid and g.lower() == HYBRID.lower())]
    if knows_hybrid and lower[0] != HYBRID.lower():
        out.append(f"OpenJDK {jdk} has {HYBRID} in JSSE: name it first")
    return out


def named_groups(text: str) -> list[str]:
    """The groups of the one -Djdk.tls.namedGroups line of a jvm.options text, in order (ValueError otherwise)."""
    found = _GROUPS.findall(text)
    if len(found) != 1:
        raise ValueError(f"{len(found)} -Djdk.tls.namedGroups lines, expected one")
    return found[0].split(",")


def file_problems(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    try:
        groups = named_groups(text)
    except ValueError as exc:
        return [f"{path.name}: {exc}"]
    jdk = _JDK.search(text)
    return [f"{path.name}: {p}" for p in groups_problems(groups, jdk.group(1) if jdk else RAN_HERE)]
