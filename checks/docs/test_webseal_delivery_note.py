"""The WebSEAL pages' Current tabs configure a software WebSEAL on Linux on IBM Z, which IBM does not deliver for
s390x today (Verify Access ships as an appliance and amd64 containers): each such page says so before its steps."""

from zrunbook import ROOT

PAGES = sorted((ROOT / "docs/how-to/webseal").glob("0*.md"))


def pages_without_the_note() -> list[str]:
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        if "{group-tab} Current" not in text:
            continue
        before_steps = text.split("\n## ", 1)[0]
        if "**What runs today.**" not in before_steps or "no s390x delivery of WebSEAL" not in before_steps:
            missing.append(page.name)
    return missing


def test_each_webseal_page_with_a_current_tab_says_what_runs_on_ibm_z_today():
    assert len(PAGES) >= 4
    assert pages_without_the_note() == []
