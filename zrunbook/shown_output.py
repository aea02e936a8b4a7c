"""Shown output: a file under snippets/ that must equal what the command prints now.

``assert_shown_output(rel, actual, normalise)`` compares ``snippets/<rel>`` with ``actual`` after
``normalise`` (drop times, serials, counters that vary). With ``ZR_REGENERATE=1`` in the environment it
rewrites the file instead and then fails, so a regenerated file is never committed unseen:
``ZR_REGENERATE=1 make check SNIPPET=crypto/ica-token/pkcsconf-t.after.out``, look at the diff,
run again without it. Output recorded on real IBM Z is not passed through here: its tests use the
``recorded-on-ibm-z`` checker and parse the file instead.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable

from zrunbook import SNIPPETS


def as_a_terminal_shows_it(text: str) -> str:
    """Apply backspaces (pkcsconf prints one to take back a trailing '|'), as the reader's terminal does."""
    lines = []
    for line in text.split("\n"):
        out: list[str] = []
        for ch in line:
            if ch == "\b":
                if out:
                    out.pop()
            else:
                out.append(ch)
        lines.append("".join(out))
    return "\n".join(lines)


def normalise_common(text: str) -> str:
    """Times, dates, hex addresses and trailing blanks vary between runs."""
    text = as_a_terminal_shows_it(text)
    text = re.sub(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?\b", "<time>", text)
    text = re.sub(r"\b0x[0-9a-f]{8,}\b", "<addr>", text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"


def assert_shown_output(rel: str, actual: str, normalise: Callable[[str], str] = normalise_common) -> None:
    path = SNIPPETS / rel
    got = normalise(actual)
    if os.environ.get("ZR_REGENERATE") == "1":
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        raise AssertionError(f"snippets/{rel} regenerated ({'changed' if old != got else 'unchanged'}); "
                             "review the diff and run again without ZR_REGENERATE")
    if not path.exists():
        raise AssertionError(f"snippets/{rel} does not exist: run with ZR_REGENERATE=1 to create it")
    want = normalise(path.read_text(encoding="utf-8"))
    if want != got:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                            f"snippets/{rel}", "now"))
        raise AssertionError(f"shown output differs from what the host prints now:\n{diff}")
