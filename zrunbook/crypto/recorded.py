"""The recorded-on-ibm-z checker: parse output that only real IBM Z hardware produces, check its values.

The study's ``lszcrypt -VV`` (2013 format: ``cardNN: TYPE status hwtype=N depth=N request_count=N``) and
``icastats`` tables are never regenerated (no container has a Crypto Express card); instead each card's
hwtype must match its type in ``facts/crypto/ap-hwtypes.csv`` (the kernel's AP device types), and the numbers the
pages state are computed from these files by ``zrunbook/crypto/values.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import facts as facts_tables
from zrunbook.formats import lsdasd

FACTS = FACTS_ROOT / "crypto" / "ap-hwtypes.csv"
LSZCRYPT_2013 = re.compile(
    r"^card(?P<card>[0-9a-f]{2}):\s+(?P<type>CEX\w+)\s+(?P<status>online|offline)\s+hwtype=(?P<hwtype>\d+)"
    r"\s+depth=(?P<depth>\d+)\s+request_count=(?P<requests>\d+)\s*$")
ICASTATS_ROW = re.compile(r"^\s*(?P<name>[A-Z0-9][A-Z0-9 -]*?)\s*\|\s*(?P<hw>\d+)\s*\|\s*(?P<sw>\d+)\s*$")


def hwtypes() -> dict[int, str]:
    return {int(row["hwtype"]): row["card"] for row in facts_tables.load(FACTS)}


def parse_lszcrypt_2013(text: str) -> list[dict]:
    cards = []
    for number, line in enumerate(text.splitlines(), 1):
        match = LSZCRYPT_2013.match(line)
        if not match:
            raise ValueError(f"line {number} is not a 2013 lszcrypt -VV card line: {line!r}")
        card = match.groupdict()
        for key in ("hwtype", "depth", "requests"):
            card[key] = int(card[key])
        cards.append(card)
    return cards


def lszcrypt_problems(text: str) -> list[str]:
    known = hwtypes()
    found = []
    for card in parse_lszcrypt_2013(text):
        named = known.get(card["hwtype"])
        if named is None:
            found.append(f"card{card['card']}: hwtype={card['hwtype']} is no known AP device type")
        elif not card["type"].startswith(named):
            found.append(f"card{card['card']}: {card['type']} with hwtype={card['hwtype']}, "
                         f"but hwtype {card['hwtype']} is {named}")
    return found


def parse_icastats(text: str) -> dict[str, tuple[int, int]]:
    """icastats' table: function -> (hardware, software); header and rule lines are skipped."""
    rows = {}
    for line in text.splitlines():
        match = ICASTATS_ROW.match(line)
        if match:
            rows[match["name"]] = (int(match["hw"]), int(match["sw"]))
    if not rows:
        raise ValueError("no icastats rows (function | hardware | software)")
    return rows


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: the parser the file's name calls for (lszcrypt, icastats, lsdasd)."""
    text = path.read_text(encoding="utf-8")
    try:
        if path.name.startswith("lszcrypt"):
            return lszcrypt_problems(text)
        if path.name.startswith("icastats"):
            parse_icastats(text)
            return []
        if path.name.startswith("lsdasd"):
            return lsdasd.problems(lsdasd.parse(text))
    except (ValueError, IndexError) as exc:
        return [f"{path.name}: {exc}"]
    return [f"{path.name}: no parser for this recorded output (lszcrypt*, icastats*, lsdasd*)"]
