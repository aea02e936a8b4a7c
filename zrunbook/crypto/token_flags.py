"""The token-flags checker: is a token, judged by its CK_TOKEN_INFO flags alone, ready for applications?

The rules come from ``facts/crypto/token-flags.csv`` (column ``when ready``: ``set``, ``clear`` or ``either``),
which the openCryptoki page also renders as its flags table. Bits are tested one by one, never the
whole value: openCryptoki versions differ in the bits they always set (DUAL_CRYPTO_OPERATIONS from 3.24).
"""

from __future__ import annotations

import re

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import facts as facts_tables

FACTS = FACTS_ROOT / "crypto" / "token-flags.csv"


def flag_table() -> list[dict[str, str]]:
    return facts_tables.load(FACTS)


def flags_in(pkcsconf_t: str) -> int:
    """The Flags value of the first token in ``pkcsconf -t`` output."""
    match = re.search(r"Flags:\s*(0x[0-9A-Fa-f]+)", pkcsconf_t)
    if not match:
        raise ValueError("no 'Flags: 0x…' line in the pkcsconf -t output")
    return int(match.group(1), 16)


def problems(flags: int) -> list[str]:
    """What keeps a token with these flags from being ready; empty when it is ready."""
    found = []
    for row in flag_table():
        mask = int(row["mask"], 16)
        if row["when ready"] == "set" and not flags & mask:
            found.append(f"{row['name']} is not set: {row['meaning']}")
        elif row["when ready"] == "clear" and flags & mask:
            found.append(f"{row['name']} is set: {row['meaning']}")
    return found


def names(flags: int) -> list[str]:
    return [row["name"] for row in flag_table() if flags & int(row["mask"], 16)]
