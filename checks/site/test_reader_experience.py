"""The guide as a reader meets it: in a real browser, on localhost, with no network."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest

from checks.site.memo import Memo, page_keys
from zrunbook import SNIPPETS, registry

ROOT = Path(__file__).resolve().parents[2]
GENERATED = {"genindex.html", "search.html"}


def pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not p.relative_to(site).parts[0].startswith("_") and p.name not in GENERATED)


# The crawl below is a module fixture: one worker visits the pages once for the three tests that read it.
pytestmark = pytest.mark.xdist_group("reader-crawl")


@pytest.fixture(scope="module")
def crawl(open_reader_page, browser, base_url, site):
    """Every page (and the search page) visited once in one reader's browser, each until the network is idle: the
    links in each page's DOM, its download links, and every console error and request that left localhost. In the
    one-change loop a page visited cleanly before (no error, no request out) whose loads are unchanged is not
    visited again (checks/site/memo.py); the search page, which reads the whole index, always is."""
    pg = open_reader_page()
    memo = Memo("crawl", page_keys(site, pages(site), test_file=__file__, browser=browser.version))
    links, downloads = {}, {}
    try:
        for rel in pages(site) + ["search.html"]:
            kept = memo.get(rel) if rel != "search.html" else None
            if kept is not None:
                links[rel], downloads[rel] = kept["links"], [f"{base_url}/{d}" for d in kept["downloads"]]
                continue
            errors, outside = len(pg.zr_errors), len(pg.zr_outside)
            pg.goto(f"{base_url}/{rel}", wait_until="networkidle")
            links[rel] = pg.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
            downloads[rel] = pg.eval_on_selector_all("a.zr-download", "els => els.map(e => e.href)")
            if rel != "search.html" and (len(pg.zr_errors), len(pg.zr_outside)) == (errors, outside):
                memo.put(rel, {"links": links[rel],
                               "downloads": [d.removeprefix(f"{base_url}/") for d in downloads[rel]]})
        memo.save()
        yield {"links": links, "downloads": downloads, "errors": list(pg.zr_errors), "outside": list(pg.zr_outside)}
    finally:
        pg.context.close()


def pages_with_tab(site: Path, label: str) -> list[str]:
    return [p for p in pages(site)
            if f'>{label}</button>' in (site / p).read_text(encoding="utf-8")]


def test_every_page_is_reachable_from_the_index(crawl, base_url, site):
    seen, queue = set(), ["index.html"]
    while queue:
        rel = queue.pop()
        if rel in seen:
            continue
        seen.add(rel)
        for href in crawl["links"][rel]:
            url = urlparse(urljoin(f"{base_url}/{rel}", href))
            target = url.path.lstrip("/")
            if url.netloc == urlparse(base_url).netloc and target.endswith(".html") and target not in GENERATED:
                queue.append(target)
    assert set(pages(site)) <= seen, f"pages no link leads to: {sorted(set(pages(site)) - seen)}"


def test_choosing_the_2013_tab_chooses_it_on_every_page(page, base_url, site, screenshot):
    with_tabs = pages_with_tab(site, "2013 study")
    assert len(with_tabs) >= 2, f"need two pages with a '2013 study' tab to prove synchronisation: {with_tabs}"
    first, *others = with_tabs
    page.goto(f"{base_url}/{first}")
    page.get_by_role("tab", name="2013 study").first.click()
    assert page.get_by_role("tab", name="2013 study").first.get_attribute("aria-selected") == "true"
    for other in others:
        page.goto(f"{base_url}/{other}")
        tab = page.get_by_role("tab", name="2013 study").first
        assert tab.get_attribute("aria-selected") == "true", f"{other} did not follow the choice"
        panel = page.locator(f'[id="{tab.get_attribute("aria-controls")}"]')
        assert panel.is_visible()
    screenshot(page, "tab-2013-" + Path(others[-1]).stem)


# One snippet of each kind a reader copies: a script, a configuration file, shown output with tabs in it.
COPIED = ["crypto/packages/verify-packages.sh", "webseal/conf/webseald-pkcs11-current.conf",
          "crypto/token/pkcsconf-t.after.out"]


def page_showing(rel: str) -> str:
    for md in sorted((ROOT / "docs").rglob("*.md")):
        if f"{{snippet}} {rel}\n" in md.read_text(encoding="utf-8"):
            return md.relative_to(ROOT / "docs").with_suffix(".html").as_posix()
    raise LookupError(f"no page shows {rel}")


@pytest.mark.uses("crypto/packages/verify-packages.sh", "crypto/token/pkcsconf-t.after.out",
                  "webseal/conf/webseald-pkcs11-current.conf")
@pytest.mark.parametrize("rel", COPIED)
def test_copy_button_copies_exactly_the_snippet_file(page, base_url, site, rel):
    """Byte for byte, except one thing sphinx-copybutton does on purpose: it drops the file's final newline,
    so that text pasted into a terminal does not run its last line before the reader has looked at it."""
    on_disk = (SNIPPETS / rel).read_text(encoding="utf-8")
    assert on_disk.endswith("\n"), f"{rel}: pick a file that ends with a newline"
    assert not on_disk.endswith("\n\n"), f"{rel}: pick a file with one final newline"
    page.goto(f"{base_url}/{page_showing(rel)}")
    block = page.locator("div.zr-snippet-wrapper").filter(has_text=rel).first
    if not block.is_visible():  # in a tab that is not chosen: choose it, as a reader would
        panel = block.evaluate("el => el.closest('[role=tabpanel]').id")
        page.locator(f'[role=tab][aria-controls="{panel}"]').click()
    block.hover()
    block.locator("button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == on_disk[:-1]
    assert copied + "\n" == on_disk


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_download_link_returns_the_byte_identical_file(crawl, site):
    checked = set()
    for rel in pages(site):
        for href in crawl["downloads"][rel]:
            name = href.split("/_snippets/", 1)[1]
            with urllib.request.urlopen(href) as response:  # noqa: S310 - loopback only
                assert response.read() == (SNIPPETS / name).read_bytes(), name
            checked.add(name)
    every = {p.relative_to(SNIPPETS).as_posix() for p in SNIPPETS.rglob("*") if p.is_file()}
    assert checked == every, f"snippets without a working download link: {sorted(every - checked)}"


def test_search_finds_pkcsconf(page, base_url, screenshot):
    page.goto(f"{base_url}/search.html?q=pkcsconf")
    results = page.locator("ul.search li")
    results.first.wait_for(timeout=10000)
    assert results.count() >= 1
    screenshot(page, "search-pkcsconf")


def test_badges_are_visible_and_say_what_ran(page, base_url, screenshot):
    page.goto(f"{base_url}/how-to/crypto/install-packages.html")
    badges = page.locator(".zr-badge")
    assert badges.count() >= 5
    first = badges.first
    assert first.is_visible()
    assert re.fullmatch(r"[\w-]+ · [\w-]+ · (passed|failed|stale|not run)", first.inner_text())
    # what a pass proves, in words before each badge (the front page lists the kinds of checkers.toml's [evidence])
    kinds = page.locator(".zr-badges .zr-evidence").all_inner_texts()
    assert len(kinds) == badges.count(), kinds
    assert set(kinds) <= {registry.evidence(name) for name in registry.declared()}, kinds
    screenshot(page, "install-packages")


def test_no_page_logs_a_console_error_or_loads_from_the_network(crawl):
    assert not crawl["errors"], crawl["errors"]
    assert not crawl["outside"], f"requests that left localhost: {crawl['outside']}"


def test_built_site_references_no_remote_script_style_or_font(site):
    remote = re.compile(r"""(?:src|href)=["'](?:https?:)?//|@import\s+url\(["']?https?:|url\(["']?https?://""")
    offenders = []
    for path in site.rglob("*"):
        if path.suffix in {".html", ".css", ".js"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in remote.finditer(text):
                line = text[max(0, m.start() - 60): m.end() + 60].replace("\n", " ")
                if path.suffix == ".html" and "<a " in line[:70]:
                    continue  # a link the reader may follow is not a resource the page loads
                offenders.append(f"{path.relative_to(site)}: ...{line}...")
    assert not offenders, "\n".join(offenders[:20])
