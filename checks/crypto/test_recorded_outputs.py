"""Output recorded on IBM Z by the 2013 study: parsed, and its values checked against each other."""

from pathlib import Path

import pytest

from zrunbook import SNIPPETS
from zrunbook.crypto import recorded, values

BAD = Path(__file__).parent / "bad"


def read(rel: str) -> str:
    return (SNIPPETS / rel).read_text(encoding="utf-8")


def test_recorded_checker_rejects_a_cex3c_with_the_cex2c_hwtype():
    """Negative case: hwtype 7 is a CEX2C; a CEX3C reports 9."""
    found = recorded.lszcrypt_problems((BAD / "lszcrypt-cex3c-as-hwtype-7.out").read_text(encoding="utf-8"))
    assert found == ["card00: CEX3C with hwtype=7, but hwtype 7 is CEX2C"]


@pytest.mark.snippet(values.LSZCRYPT, values.ICASTATS, checker="recorded-on-ibm-z")
def test_study_accelerator_requests_equal_the_rsa_operations_libica_counted():
    """The page says the online CEX3A's request count is libica's MOD EXPO + RSA CRT hardware count."""
    assert values.study_online_card_requests() == values.study_rsa_requests()


@pytest.mark.snippet(values.ICASTATS, checker="recorded-on-ibm-z")
def test_study_icastats_has_the_rows_the_page_discusses():
    stats = recorded.parse_icastats(read(values.ICASTATS))
    for row in ("SHA-1", "RANDOM", "MOD EXPO", "RSA CRT", "AES ENC", "AES DEC"):
        assert row in stats
    assert stats["AES ENC"][1] == stats["AES DEC"][1] == 0, "the page says AES ran only in hardware"


@pytest.mark.negative(invariant="a recorded icastats output is icastats'",
                      expects="text that is not icastats is refused: no icastats rows")
def test_recorded_checker_rejects_text_that_is_not_icastats():
    with pytest.raises(ValueError, match="no icastats rows"):
        recorded.parse_icastats("SHA-512: yes\n")


@pytest.mark.snippet("crypto/cpacf/icainfo-2013-study-z196.out", checker="recorded-on-ibm-z")
def test_study_icainfo_lists_the_ciphers_its_cipher_suite_needs():
    lines = dict(line.split(":", 1) for line in read("crypto/cpacf/icainfo-2013-study-z196.out").splitlines()[2:])
    assert {k: v.strip() for k, v in lines.items() if k in ("SHA-1", "AES-256")} == {"SHA-1": "yes", "AES-256": "yes"}
