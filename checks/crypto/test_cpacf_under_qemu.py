"""What the CPACF page says about the s390x host, read from the two outputs that host regenerates.

The page says qemu emulates only CPACF SHA-512 (KIMD/KLMD) and the true random number generator, and
that libica 3.9's `static: yes` for GHASH and the AES/DES modes of message-security-assist extension 4
comes from the facility bit alone. ``openssl version -a``'s CPUINFO line holds the processor's own
query answers (the first doubleword of each pair: bit n = function code n; the second: codes 64-127).
"""

import re

import pytest

from zrunbook import SNIPPETS

QUERY_ONLY = (0x8000000000000000, 0x0)


def cpuinfo() -> dict[str, tuple[int, ...]]:
    text = (SNIPPETS / "crypto/verify/openssl-version-a.out").read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith("CPUINFO: OPENSSL_s390xcap="))
    fields = line.split("=", 1)[1].split(":")
    masks, name = {}, None
    for field in fields:
        if re.fullmatch(r"[a-z]+", field):
            name = field
            masks[name] = ()
        else:
            masks[name] += (int(field, 16),)
    return masks


def has(words: tuple[int, ...], bit: int) -> bool:
    """Bit numbering as the architecture's: bit 0 is the leftmost bit of the first doubleword."""
    return bool(words[bit // 64] >> (63 - bit % 64) & 1)


def icainfo_static() -> dict[str, str]:
    text = (SNIPPETS / "crypto/cpacf/icainfo.out").read_text(encoding="utf-8")
    rows = [line.split("|") for line in text.splitlines() if line.count("|") == 3]
    return {row[0].strip(): row[2].strip() for row in rows}


@pytest.mark.uses("crypto/verify/openssl-version-a.out")
def test_qemu_offers_no_aes_des_or_ghash_function_in_its_query_answers():
    masks = cpuinfo()
    for insn in ("km", "kmc", "kmac", "kmctr", "kmo", "kmf", "kma", "pcc"):
        assert masks[insn] == QUERY_ONLY, insn
    assert not has(masks["kimd"], 65), "GHASH is KIMD function 65"


@pytest.mark.uses("crypto/verify/openssl-version-a.out")
def test_qemu_offers_sha512_and_the_true_random_number_generator():
    masks = cpuinfo()
    for insn in ("kimd", "klmd"):
        assert has(masks[insn], 3), f"{insn}: SHA-512 is function 3"
        assert not has(masks[insn], 1), f"{insn}: no SHA-1"
        assert not has(masks[insn], 2), f"{insn}: no SHA-256"
    assert has(masks["prno"], 114), "TRNG is PRNO function 114"


@pytest.mark.uses("crypto/cpacf/icainfo.out", "crypto/verify/openssl-version-a.out")
def test_libica_marks_the_msa4_group_static_from_the_facility_bit_alone():
    assert has(cpuinfo()["stfle"], 77), "facility 77: message-security-assist extension 4"
    static = icainfo_static()
    for row in ("GHASH", "AES OFB", "AES CFB", "AES CTR", "AES CMAC", "AES XTS", "AES GCM", "DES CTR"):
        assert static[row] == "yes", row
    for row in ("AES ECB", "AES CBC", "SHA-256"):
        assert static[row] == "no", row
