"""Every page of the built guide, in both colour schemes, has no serious or critical violation of axe-core's
WCAG 2.1 A and AA rules (axe-core as bundled by axe-playwright-python), and the interactive parts work by
keyboard alone. The fixes are made where the HTML is written (docs/_ext/a11y.py, docs/_static/zrunbook.css);
no rule is disabled.

In the one-change loop a page that passed keeps its verdict while what the browser loads for it is unchanged
(checks/site/memo.py): after a snippet edit one page is scanned instead of every page twice.
"""

from __future__ import annotations

import collections

import pytest
from axe_playwright_python.sync_playwright import Axe

from checks.site.memo import Memo, page_keys

RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
OPTIONS = {"runOnly": {"type": "tag", "values": RULES}, "resultTypes": ["violations"]}
SERIOUS = ("serious", "critical")


def violations(pg) -> list[tuple[str, str, str]]:
    """(rule, impact, element) of every serious or critical violation axe-core finds on the open page."""
    found = Axe().run(pg, options=OPTIONS).response["violations"]
    return [(v["id"], v["impact"], n["html"][:120]) for v in found if v["impact"] in SERIOUS for n in v["nodes"]]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_page_has_a_serious_or_critical_accessibility_violation(browser, base_url, site, guide_pages, scheme):
    memo = Memo(f"axe-{scheme}", page_keys(site, guide_pages, test_file=__file__, browser=browser.version,
                                           extra=scheme))
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1300, "height": 1000})
    pg = context.new_page()
    by_rule, bad, scanned = collections.Counter(), {}, 0
    checked = guide_pages
    for rel in checked:
        if memo.get(rel) == "passed":
            continue
        pg.goto(f"{base_url}/{rel}")
        found = violations(pg)
        scanned += 1
        by_rule.update(rule for rule, _impact, _el in found)
        if found:
            bad[rel] = found[:3]
        else:
            memo.put(rel, "passed")
    context.close()
    memo.save()
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
    """The loop's page keys (checks/site/memo.py): an edited page and an edited style sheet change keys; the
    downloads and the snippet files, which every snippet edit changes and no page loads, do not."""
    for folder in ("_static", "_downloads", "_snippets/db2"):
        (tmp_path / folder).mkdir(parents=True)
    for name, text in (("a.html", "<p>a</p>"), ("b.html", "<p>b</p>"), ("_static/x.css", "p{}"),
                       ("_downloads/bundle.tar.gz", "1"), ("_snippets/db2/step.clp", "-- 1")):
        (tmp_path / name).write_text(text, encoding="utf-8")

    def keys(scheme="light"):
        return page_keys(tmp_path, ["a.html", "b.html"], test_file=__file__, browser="chromium 1", extra=scheme)

    before = keys()
    assert before != keys("dark")
    (tmp_path / "_downloads/bundle.tar.gz").write_text("2", encoding="utf-8")
    (tmp_path / "_snippets/db2/step.clp").write_text("-- 2", encoding="utf-8")  # the snippet's download
    assert keys() == before
    (tmp_path / "a.html").write_text("<p>a, edited</p>", encoding="utf-8")
    edited = keys()
    assert edited["a.html"] != before["a.html"]
    assert edited["b.html"] == before["b.html"]
    (tmp_path / "_static/x.css").write_text("p{color:red}", encoding="utf-8")
    assert keys()["b.html"] != edited["b.html"]


def test_a_kept_page_result_stands_only_for_its_key_and_only_in_the_loop(monkeypatch):
    """Memo: a result is found again under the page's key; a page whose key changed, or a run outside the loop
    (CI, ALL=1), finds nothing; saving drops the keys of pages this build no longer has."""
    monkeypatch.setenv("ZR_REUSE", "1")
    memo = Memo("roundtrip-test", {"a.html": "k1", "b.html": "k2"})
    memo.path.unlink(missing_ok=True)
    memo.kept = {}
    memo.put("a.html", "passed")
    memo.kept["gone"] = {"page": "c.html", "result": "passed"}
    memo.save()
    try:
        assert Memo("roundtrip-test", {"a.html": "k1", "b.html": "k2"}).get("a.html") == "passed"
        assert Memo("roundtrip-test", {"a.html": "k1"}).kept.keys() == {"k1"}
        assert Memo("roundtrip-test", {"a.html": "k3"}).get("a.html") is None
        assert Memo("roundtrip-test", {"b.html": "k1"}).get("b.html") is None  # another page with the same bytes
        monkeypatch.delenv("ZR_REUSE")
        assert Memo("roundtrip-test", {"a.html": "k1"}).get("a.html") is None
    finally:
        memo.path.unlink(missing_ok=True)
