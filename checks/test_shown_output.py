"""The shown-output comparison can fail: a changed line is reported as a diff."""

import pytest

from zrunbook import shown_output


def test_changed_output_is_reported_as_a_diff(tmp_path, monkeypatch):
    monkeypatch.setattr(shown_output, "SNIPPETS", tmp_path)
    (tmp_path / "x.out").write_text("Token #3 Info:\n\tLabel: zrunbook\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=r"(?s)-\tLabel: zrunbook.*\+\tLabel: other"):
        shown_output.assert_shown_output("x.out", "Token #3 Info:\n\tLabel: other\n")


def test_times_and_trailing_blanks_do_not_count(tmp_path, monkeypatch):
    monkeypatch.setattr(shown_output, "SNIPPETS", tmp_path)
    (tmp_path / "y.out").write_text("started 2026-11-22 04:16:17\n", encoding="utf-8")
    shown_output.assert_shown_output("y.out", "started 2025-01-02 11:12:13   \n")


def test_backspaces_are_applied_as_a_terminal_shows_them():
    assert shown_output.as_a_terminal_shows_it("Flags: 0x44D (RNG|TOKEN_INITIALIZED|\b)") == \
        "Flags: 0x44D (RNG|TOKEN_INITIALIZED)"
