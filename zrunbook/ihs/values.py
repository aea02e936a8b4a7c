"""Values the IHS pages compute at build time (the ``{value}`` role: ``{value}`ihs:gskit_level```)."""

from __future__ import annotations

DEPENDS_ON = ["zrunbook/clidriver.py", "facts/ihs/gskit-attributes.csv"]


def gskit_level() -> str:
    """The GSKit level the IHS checks ran: the one in the pinned ibm_db wheel (zrunbook/clidriver.py)."""
    from zrunbook import clidriver

    return clidriver.GSKIT


def gskit_wheel() -> str:
    from zrunbook import clidriver

    return f"ibm_db {clidriver.VERSION}"
