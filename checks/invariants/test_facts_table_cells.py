"""Facts-table cells: long words get break points, and not one character is lost on the way.

The first version of ``breakable`` cut every piece eight characters wide, so "handshake-" came out as
"handshak" in the results page's summary table (HTML and PDF): found by looking at the page.
"""

import sys
from pathlib import Path

import pytest
from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "_ext"))
import facts  # noqa: E402  (the project's Sphinx extension)

WORDS = [
    "resumed-handshake-get-4k",
    "full-handshake-openssl-s_server-rsa-kex",
    "checks/ihs/test_httpd_conf_lint.py::test_httpd_t_with_the_lint_rejects_the_bad_configuration",
    "TLS_CHACHA20_POLY1305_SHA256",
    "4f51a7ee7e1441e78d150598072aa99a00eca31313a716cd20a4ecbc89832aa1",
    "SSLCacheEnable|SSLCacheDisable",
]


def text_of(pieces) -> str:
    return "".join(p.astext() for p in pieces if isinstance(p, nodes.Text))


@pytest.mark.parametrize("word", WORDS)
def test_a_long_word_keeps_every_character_once_its_break_points_are_removed(word):
    assert text_of(facts.breakable(word)) == word


@pytest.mark.parametrize("word", WORDS)
def test_a_long_word_gets_break_points_for_html_and_latex(word):
    raws = [p for p in facts.breakable(word) if isinstance(p, nodes.raw)]
    assert {r["format"] for r in raws} == {"html", "latex"}
    pieces = [p.astext() for p in facts.breakable(word) if isinstance(p, nodes.Text)]
    assert max(len(p) for p in pieces) <= facts.LONG_WORD
