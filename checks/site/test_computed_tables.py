"""The built guide shows what the pages compute: the libraries page's distribution table carries the route each
distribution's OpenSSL takes to Crypto Express, computed from facts/crypto/openssl-routes.csv (zrunbook/crypto/
routes.py), in a column the CSV file does not have."""

from bs4 import BeautifulSoup

from zrunbook import facts as facts_tables
from zrunbook.crypto import routes


def test_the_libraries_page_shows_each_distributions_computed_route(site):
    html = BeautifulSoup((site / "how-to/crypto/04-libraries.html").read_text(encoding="utf-8"), "html.parser")
    table = next(t for t in html.select("table.zr-facts")
                 if "distribution" in [th.get_text(strip=True) for th in t.select("thead th")]
                 and "route to Crypto Express" in [th.get_text(strip=True) for th in t.select("thead th")])
    heads = [th.get_text(strip=True) for th in table.select("thead th")]
    shown = {cells[0]: cells[heads.index("route to Crypto Express")]
             for cells in ([" ".join(td.get_text().split()) for td in tr.select("td")]
                           for tr in table.select("tbody tr"))}
    expected = {r["distribution"]: r["route to Crypto Express"]
                for r in routes.with_route(facts_tables.table(routes.VERSIONS))}
    assert shown == expected
