"""A password or PIN a snippet gives a program on its command line is visible to every local user in `ps` while the
program runs. GSKit's commands take them only that way (-pw), so each page that shows such a snippet says so."""

import re

import pytest

from zrunbook import ROOT, SNIPPETS
from zrunbook.where import shown_on

ON_COMMAND_LINE = re.compile(r"""\s-pw\s+["']?\$""")  # -pw "$KDB_PASSWORD", -pw "${TOKEN_USER_PIN}"
WARNING = re.compile(r"visible\s+in\s+`ps`")


def missing_warnings() -> list[str]:
    """'page: snippet' for each page that shows a snippet passing a secret with -pw without the warning."""
    missing = []
    for path in sorted(SNIPPETS.rglob("*.sh")):
        if not ON_COMMAND_LINE.search(path.read_text(encoding="utf-8")):
            continue
        rel = path.relative_to(SNIPPETS).as_posix()
        for page in sorted({page for page, _, _ in shown_on(rel)}):
            if not WARNING.search((ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")):
                missing.append(f"{page}: {rel}")
    return missing


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*.sh")
def test_every_page_with_a_password_on_a_gskit_command_line_says_it_is_visible_in_ps():
    assert missing_warnings() == []


def test_the_pattern_finds_the_gskit_password_forms():
    assert ON_COMMAND_LINE.search('gsk8capicmd_64 -keydb -create -db "$K" -pw "$KEYSTORE_PASSWORD" -stash')
    assert ON_COMMAND_LINE.search("gskcapicmd -cert -list -pw ${TOKEN_USER_PIN}")
    assert not ON_COMMAND_LINE.search("gskcapicmd -cert -list -stashed")
