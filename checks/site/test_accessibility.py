"""Every page of the built guide, in both colour schemes, has no serious or critical violation of axe-core's
WCAG 2.1 A and AA rules (axe-core as bundled by axe-playwright-python), and the interactive parts work by
keyboard alone. The fixes are made where the HTML is written (docs/_ext/a11y.py, docs/_static/zrunbook.css);
no rule is disabled.

In the one-change loop (a plain ``make check``, checks/reuse.py) a page's verdict from an earlier scan stands while
what axe-core sees of it is unchanged: the page's HTML, every style sheet, script, image and font of the site
(``_static/``, ``_images/`` and the other ``_`` folders but the downloads and sources), the colour scheme, axe-core's
and Chromium's versions and this file. After a snippet edit one page is scanned instead of every page twice (about
540 s of a worker). CI and ``make check ALL=1`` scan every page.
"""

from __future__ import annotations

import collections
import hashlib
import json
from importlib.metadata import version
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe

from checks import reuse

RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
OPTIONS = {"runOnly": {"type": "tag", "values": RULES}, "resultTypes": ["violations"]}
SERIOUS = ("serious", "critical")


def violations(pg) -> list[tuple[str, str, str]]:
    """(rule, impact, element) of every serious or critical violation axe-core finds on the open page."""
    found = Axe().run(pg, options=OPTIONS).response["violations"]
    return [(v["id"], v["impact"], n["html"][:120]) for v in found if v["impact"] in SERIOUS for n in v["nodes"]]


MEMO = reuse.REPO / "build" / "a11y-passed-pages-{scheme}.json"  # page key -> page, for pages that passed here
NOT_SEEN = ("_downloads", "_sources")  # what no page loads: the bundle changes with every snippet


def page_keys(site: Path, pages: list[str], scheme: str, chromium: str) -> dict[str, str]:
    """Each page's key: what axe-core sees of it (module docstring)."""
    common = hashlib.sha256(f"{scheme}\0{version('axe-playwright-python')}\0{chromium}\0".encode()
                            + Path(__file__).read_bytes())
    for asset in sorted(p for p in site.rglob("*") if p.is_file() and p.relative_to(site).parts[0].startswith("_")
                        and p.relative_to(site).parts[0] not in NOT_SEEN):
        common.update(asset.relative_to(site).as_posix().encode() + b"\0" + asset.read_bytes() + b"\0")
    return {rel: hashlib.sha256(common.digest() + rel.encode() + b"\0" + (site / rel).read_bytes()).hexdigest()
            for rel in pages}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_page_has_a_serious_or_critical_accessibility_violation(browser, base_url, site, guide_pages, scheme):
    keys = page_keys(site, guide_pages, scheme, browser.version)
    memo_file = Path(str(MEMO).format(scheme=scheme))  # one per scheme: the two may run on two workers at once
    memo = json.loads(memo_file.read_text(encoding="utf-8")) if reuse.enabled() and memo_file.is_file() else {}
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1300, "height": 1000})
    pg = context.new_page()
    by_rule, bad, scanned = collections.Counter(), {}, 0
    checked = guide_pages
    for rel in checked:
        if memo.get(keys[rel]) == rel:
            continue
        pg.goto(f"{base_url}/{rel}")
        found = violations(pg)
        scanned += 1
        by_rule.update(rule for rule, _impact, _el in found)
        if found:
            bad[rel] = found[:3]
        else:
            memo[keys[rel]] = rel
    context.close()
    if reuse.enabled():  # the keys of this build's pages that passed, now or before
        memo_file.write_text(json.dumps({k: rel for rel, k in keys.items() if memo.get(k) == rel}, indent=0),
                             encoding="utf-8")
    print(f"axe-core, rules {', '.join(RULES)}, {scheme} scheme: {len(checked)} pages, {scanned} scanned "
          f"({len(checked) - scanned} unchanged since they passed here), "
          f"{sum(by_rule.values())} serious or critical violations {dict(by_rule)}")
    assert len(checked) > 50
    assert bad == {}


def test_the_audit_finds_the_violations_the_guide_had(page, base_url, site):
    # Negative case: the three kinds of violation the guide had before docs/_ext/a11y.py, rebuilt in a page
    # (the diagram is one of the guide's own SVGs, so that it loads and hides the text inside the object).
    svg = sorted(site.glob("_images/graphviz-*.svg"))[0].relative_to(site).as_posix()
    page.goto(f"{base_url}/index.html")
    page.set_content(
        "<html lang='en'><head><title>t</title></head><body><main>"
        "<p class='caption' role='heading'><span>How-to</span></p>"
        "<div style='width:200px'><pre style='overflow:auto'>" + "x" * 400 + "</pre></div>"
        f"<object data='{svg}' type='image/svg+xml'><p>diagram</p></object>"
        "</main></body></html>")
    rules = {rule for rule, _impact, _el in violations(page)}
    assert {"aria-required-attr", "scrollable-region-focusable", "object-alt"} <= rules


def test_tabs_copy_button_and_code_work_by_keyboard_alone(page, base_url):
    page.goto(f"{base_url}/how-to/was/05-pkcs11-provider.html")
    reached = []
    for _ in range(400):
        page.keyboard.press("Tab")
        reached.append(page.evaluate(
            "() => { const e = document.activeElement; return [e.tagName, e.className || '', "
            "e.getAttribute('role') || '', (e.textContent || '').trim().slice(0, 40)]; }"))
    kinds = {(tag, role) for tag, _cls, role, _text in reached}
    assert ("BUTTON", "tab") in kinds, "no tab of a tab set is reachable by Tab"
    assert any(tag == "BUTTON" and "copybtn" in cls for tag, cls, _r, _t in reached), "no copy button reached"
    assert any(tag == "PRE" for tag, _c, _r, _t in reached), "no scrolling code block reached"
    # Choose the 2013 tab by keyboard: focus it, press Enter, and its panel shows.
    study = page.locator("button[role=tab]", has_text="2013 study").first
    study.focus()
    page.keyboard.press("Enter")
    assert study.get_attribute("aria-selected") == "true"
    panel = page.locator(f"[id='{study.get_attribute('aria-controls')}']")
    assert panel.is_visible()


def test_a_page_is_scanned_again_when_it_or_what_it_loads_changes(tmp_path):
    """The loop's page keys (page_keys): an edited page and an edited style sheet change keys; the downloads, which
    every snippet edit changes and no page loads, do not."""
    (tmp_path / "_static").mkdir()
    (tmp_path / "_downloads").mkdir()
    for name, text in (("a.html", "<p>a</p>"), ("b.html", "<p>b</p>"), ("_static/x.css", "p{}"),
                       ("_downloads/bundle.tar.gz", "1")):
        (tmp_path / name).write_text(text, encoding="utf-8")

    def keys():
        return page_keys(tmp_path, ["a.html", "b.html"], "light", "chromium 1")

    before = keys()
    assert before != page_keys(tmp_path, ["a.html", "b.html"], "dark", "chromium 1")
    (tmp_path / "_downloads/bundle.tar.gz").write_text("2", encoding="utf-8")
    assert keys() == before
    (tmp_path / "a.html").write_text("<p>a, edited</p>", encoding="utf-8")
    edited = keys()
    assert edited["a.html"] != before["a.html"]
    assert edited["b.html"] == before["b.html"]
    (tmp_path / "_static/x.css").write_text("p{color:red}", encoding="utf-8")
    assert keys()["b.html"] != edited["b.html"]
