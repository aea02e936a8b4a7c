"""A how-to page that says "step N" in its own words means its own heading "## N.": a reference to another page's
step is a link to it. (was/07-verify-tls.md said "step 5" and "step 6" for the provider and cipher-suite pages
while it has three steps of its own.)"""

import re

from zrunbook import ROOT

LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
STEP = re.compile(r"(?<![\w-])[Ss]teps? (\d+)(?!\w|\.\d)")


def dangling_step_references(text: str) -> list[int]:
    steps = {int(n) for n in re.findall(r"^## (\d+)\.", text, re.M)}
    return [int(n) for n in STEP.findall(LINK.sub("", text)) if int(n) not in steps]


def test_every_unlinked_step_reference_names_a_step_of_the_same_page():
    bad = {page.relative_to(ROOT).as_posix(): dangling_step_references(page.read_text(encoding="utf-8"))
           for page in sorted((ROOT / "docs/how-to").rglob("*.md"))}
    assert {page: steps for page, steps in bad.items() if steps} == {}


def test_the_rule_ignores_links_and_finds_a_number_the_page_lacks():
    page = "## 1. One\n\nAs in step 1 and [the other page's step 4](other.md#4-x), not step 5.\n"
    assert dangling_step_references(page) == [5]
