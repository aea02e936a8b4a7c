"""Per-page results of the browser tests that the one-change loop may keep (checks/reuse.py).

The guide's tests read the built site in a browser, which the observer cannot see, so reuse keys them on the whole
tree: any edit runs them again. Two of them visit every page (the accessibility scan, twice, and the reader's crawl),
about eight minutes of a worker between them. Within such a test, a page's result from an earlier run here stands
while what the browser loads for it is unchanged: the page's HTML; every style sheet, script, image and font of the
site (``_static/``, ``_images/`` and the other ``_`` folders but the downloads, the snippet files and the page
sources, which no page loads and which every snippet edit changes: the first version keyed on ``_snippets/`` too,
and after a snippet edit scanned every page again); the test's own parameters (a colour scheme); the browser's and
axe-core's versions and the test file. Only a plain ``make check`` (``ZR_REUSE=1``) keeps results; CI and
``make check ALL=1`` visit every page.
"""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from pathlib import Path

from checks import reuse

NOT_LOADED = ("_downloads", "_snippets", "_sources")


def page_keys(site: Path, pages: list[str], *, test_file: str, browser: str, extra: str = "") -> dict[str, str]:
    """Each page's key (module docstring)."""
    common = hashlib.sha256(f"{extra}\0{version('axe-playwright-python')}\0{browser}\0".encode()
                            + Path(test_file).read_bytes())
    for asset in sorted(p for p in site.rglob("*") if p.is_file() and p.relative_to(site).parts[0].startswith("_")
                        and p.relative_to(site).parts[0] not in NOT_LOADED):
        common.update(asset.relative_to(site).as_posix().encode() + b"\0" + asset.read_bytes() + b"\0")
    return {rel: hashlib.sha256(common.digest() + rel.encode() + b"\0" + (site / rel).read_bytes()).hexdigest()
            for rel in pages}


class Memo:
    """A test's kept page results (build/page-memo-NAME.json): ``get(rel)`` the result kept for the page's current
    key or None, ``put(rel, result)`` keeps one, ``save()`` writes the results of this build's pages only."""

    def __init__(self, name: str, keys: dict[str, str]):
        self.path = reuse.REPO / "build" / f"page-memo-{name}.json"
        self.keys = keys
        self.kept = json.loads(self.path.read_text(encoding="utf-8")) \
            if reuse.enabled() and self.path.is_file() else {}

    def get(self, rel: str):
        found = self.kept.get(self.keys[rel])
        return found["result"] if found and found["page"] == rel else None

    def put(self, rel: str, result) -> None:
        self.kept[self.keys[rel]] = {"page": rel, "result": result}

    def save(self) -> None:
        if reuse.enabled():
            live = set(self.keys.values())
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({k: v for k, v in self.kept.items() if k in live}), encoding="utf-8")
