"""One table decides the route each OpenSSL release takes to Crypto Express (facts/crypto/openssl-routes.csv), and
the libraries page computes each distribution's route from it (zrunbook/crypto/routes.py): no route is typed beside
a release.

The table covers 1.1 onwards without a gap or an overlap; each distribution row gets the route of every release it
names (SLES 15: two); a release older than the table, or a table with a gap, is refused with a sentence; the page
computes the column and states the table's rule (checks/site/test_computed_tables.py reads the built page).
"""

from __future__ import annotations

import csv
import io

import pytest

from zrunbook import facts as facts_tables
from zrunbook.crypto import routes, values


def gaps(rows: list[dict[str, str]]) -> list[str]:
    """What breaks the table's cover of 1.1 onwards: a row that does not start where the one before ends, an
    open end before the last row, a last row that ends."""
    found = []
    for before, after in zip(rows, rows[1:], strict=False):
        if not before["below"].strip():
            found.append(f"{before['OpenSSL']}: an open end before the last row")
        elif routes._pair(before["below"]) != routes._pair(after["from"]):
            found.append(f"{before['OpenSSL']} ends at {before['below']}, {after['OpenSSL']} starts at {after['from']}")
    if rows and rows[-1]["below"].strip():
        found.append(f"{rows[-1]['OpenSSL']}: the newest row must have no end")
    return found


def test_the_routes_table_covers_every_release_from_1_1_without_a_gap():
    rows = routes.routes()
    assert routes._pair(rows[0]["from"]) == (1, 1)
    assert gaps(rows) == []


def test_a_table_with_a_gap_is_found():
    bad = [dict(r) for r in routes.routes()]
    bad[1]["from"] = "3.1"  # 1.1.1 ends at 3.0; 3.0 itself would have no route
    assert gaps(bad) == ["1.1.1 ends at 3.0, 3.0 and 3.1 starts at 3.1"]


@pytest.mark.parametrize(("release", "route"), [((1, 1), "the ibmca engine"), ((3, 0), "the ibmca provider"),
                                                ((3, 1), "the ibmca provider"),
                                                ((3, 2), "OpenSSL itself through /dev/z90crypt"),
                                                ((3, 6), "OpenSSL itself through /dev/z90crypt")])
def test_each_release_has_the_route_of_its_row(release, route):
    assert routes.route_for(release)["route to Crypto Express"] == route


@pytest.mark.negative(invariant="the OpenSSL routes table",
                      expects="a release older than the table has no route (NoRoute, one sentence)")
def test_a_release_older_than_the_table_is_refused_with_a_sentence():
    with pytest.raises(routes.NoRoute, match=r"OpenSSL 1\.0 has no route .* older than any release"):
        routes.route_for((1, 0))


def test_every_distribution_gets_a_computed_route_or_says_it_is_unconfirmed():
    rows = {r["distribution"]: r["route to Crypto Express"]
            for r in routes.with_route(facts_tables.table(routes.VERSIONS))}
    assert rows["Debian 13 (trixie)"] == "OpenSSL itself through /dev/z90crypt"
    assert rows["Ubuntu 24.04 (noble)"] == "the ibmca provider"
    assert rows["SLES 15 SP6 and SP7"] == "3.1.4: the ibmca provider; 1.1.1: the ibmca engine"
    assert rows["RHEL 9.8"] == "OpenSSL itself through /dev/z90crypt"  # not the FIPS provider's 3.0.7 in brackets
    assert rows["SLES 16.0"] == routes.UNCONFIRMED
    assert all(rows.values())


def test_the_distribution_table_types_no_route_of_its_own(tmp_path):
    """The schema keeps the route out of the distribution table: a table that types one is refused."""
    text = (facts_tables.FACTS / f"{routes.VERSIONS}.csv").read_text(encoding="utf-8")
    assert "route to Crypto Express" not in next(csv.reader(io.StringIO(text)))
    typed = tmp_path / "openssl-versions.csv"
    typed.write_text(text.replace("caveat", "Crypto Express for OpenSSL", 1), encoding="utf-8")
    problems, _ = facts_tables.schema_problems(typed, routes.VERSIONS)
    assert problems
    assert "not declared ['Crypto Express for OpenSSL']" in problems[0]


def test_the_page_states_the_tables_rule_and_computes_the_column():
    assert values.openssl_route_rule() == ("3.2 and later: OpenSSL itself through /dev/z90crypt; 3.0 and 3.1: the "
                                           "ibmca provider; 1.1.1: the ibmca engine")
    page = (facts_tables.ROOT / "docs/how-to/crypto/04-libraries.md").read_text(encoding="utf-8")
    assert "{value}`crypto:openssl_route_rule`" in page
    assert ":rows: crypto.routes:with_route" in page


@pytest.mark.arch_dependent("each host runs the OpenSSL of its own architecture's package lock")
def test_the_table_names_the_openssl_each_runbook_host_runs(host):
    """The Debian 13 row names each host's OpenSSL (both locks hold the same, checks/hosts/test_lock.py): a host
    image built with another release fails here until the table says so."""
    version = host.check_output("openssl version").split()[1]
    row = next(r for r in facts_tables.table(routes.VERSIONS) if r["distribution"].startswith("Debian 13"))
    assert f"hosts: {version} on both" in row["OpenSSL"], (version, row["OpenSSL"])
    assert routes.route_text(row["OpenSSL"]) == routes.route_for(routes._pair(version))["route to Crypto Express"]
