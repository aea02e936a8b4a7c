"""Which adapter modes serve clear-key RSA: one truth, facts/crypto/cex-modes.csv, rendered by {value} roles."""

import pytest

from zrunbook.crypto import values


def test_pages_name_accelerators_and_cca_but_not_ep11_for_clear_key_rsa():
    assert values.clear_key_rsa_modes() == "accelerators and CCA coprocessors"
    assert values.no_clear_key_rsa_modes() == "EP11 coprocessors"


def test_the_value_follows_the_table_not_the_page(monkeypatch):
    """Negative case: a table that gave EP11 clear-key RSA would change the pages, and one with no such mode fails."""
    rows = [{"mode": "accelerator", "clear-key RSA": "yes"}, {"mode": "EP11 coprocessor", "clear-key RSA": "yes"}]
    monkeypatch.setattr(values.facts_tables, "table", lambda name: rows)
    assert values.clear_key_rsa_modes() == "accelerators and EP11 coprocessors"
    with pytest.raises(ValueError, match="no adapter mode"):
        values.no_clear_key_rsa_modes()
