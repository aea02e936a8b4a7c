"""Which route an OpenSSL release takes to Crypto Express, decided in one place: facts/crypto/openssl-routes.csv.

Each row of that table covers the releases from ``from`` up to (not including) ``below``; together they cover 1.1
onwards without a gap or an overlap (checks/crypto/test_openssl_routes.py). ``route_for((3, 1))`` is the row of a
release; ``with_route(rows)`` gives the distribution table (facts/crypto/openssl-versions.csv) its computed
"route to Crypto Express" column, which the libraries page shows: a release's route is never typed beside it.
"""

from __future__ import annotations

import re

from zrunbook import facts as facts_tables

ROUTES = "crypto/openssl-routes"
VERSIONS = "crypto/openssl-versions"
UNCONFIRMED = "unconfirmed: the OpenSSL version is not known"


class NoRoute(ValueError):
    """A release no row of the routes table covers."""


def _pair(text: str) -> tuple[int, int]:
    major, minor = text.strip().split(".")[:2]
    return int(major), int(minor)


def routes() -> list[dict[str, str]]:
    return facts_tables.table(ROUTES)


def route_for(release: tuple[int, int]) -> dict[str, str]:
    for row in routes():
        if _pair(row["from"]) <= release and (not row["below"].strip() or release < _pair(row["below"])):
            return row
    raise NoRoute(f"OpenSSL {release[0]}.{release[1]} has no route in facts/{ROUTES}.csv: it is older than any "
                  "release the runbook covers")


def releases(cell: str) -> dict[tuple[int, int], str]:
    """The OpenSSL releases a distribution's cell names outside parentheses, each with the version as written
    ("3.1.4 (openssl-3) beside 1.1.1" names 3.1 and 1.1; "3.5.5 (FIPS provider 3.0.7 ...)" names 3.5); none when
    the cell says unconfirmed."""
    if cell.strip().startswith("unconfirmed"):
        return {}
    outside = re.sub(r"\([^)]*\)", "", cell)
    found: dict[tuple[int, int], str] = {}
    for match in re.finditer(r"(?<![\d.])(\d+)\.(\d+)(?:\.\d+)?", outside):
        found.setdefault((int(match[1]), int(match[2])), match[0])
    return found


def route_text(cell: str) -> str:
    """The route column of one distribution: the route of each release it ships."""
    found = releases(cell)
    if not found:
        return UNCONFIRMED
    if len(found) == 1:
        return route_for(next(iter(found)))["route to Crypto Express"]
    return "; ".join(f"{text}: {route_for(pair)['route to Crypto Express']}" for pair, text in found.items())


def with_route(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The distribution table's rows with the computed "route to Crypto Express" column."""
    return [{**row, "route to Crypto Express": route_text(row["OpenSSL"])} for row in rows]
