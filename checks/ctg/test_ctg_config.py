"""CICS Transaction Gateway's SSL settings, provider list and JVM options, read and validated.

CICS TG runs on z/OS, which the runbook's hosts are not, so the files are read: ctg.ini by ctg_ini.py with
facts tables (sections, keys, SSL handler parameters, cipher names shared with the WAS chapter), the
java.security lines by the WAS chapter's checker plus the z/OS provider-order rule, the STDENV line by
jvm.py. The study's own listing and typical slips are the negative cases in checks/ctg/bad/.
"""

from pathlib import Path

import pytest

from zrunbook import SNIPPETS
from zrunbook.ctg import ctg_ini, jvm

ROOT = Path(__file__).resolve().parents[2]
BAD = Path(__file__).parent / "bad"


def read(rel: str) -> str:
    return (SNIPPETS / rel).read_text(encoding="utf-8")


def bad(name: str) -> str:
    return (BAD / name).read_text(encoding="utf-8")


@pytest.mark.snippet("ctg/ctg-ssl-current.ini", checker="ctg-ini")
def test_current_ctg_ini_uses_a_racf_key_ring_hardware_crypto_and_forward_secret_suites():
    e = ctg_ini.entries(read("ctg/ctg-ssl-current.ini"))
    assert e[("PRODUCT", "esmkeyring")] == "on"
    assert e[("PRODUCT", "hwcrypt")] == "on"
    assert ("PRODUCT", "keyringpw") not in e
    suites = e[("GATEWAY", "protocol@ssl.parameters")].split("ciphersuites=")[1].rstrip(";").split(",")
    assert suites
    assert all(s.startswith("TLS_ECDHE_") and "_GCM_" in s for s in suites)


def test_ctg_ini_validator_rejects_a_section_without_endsection():
    assert any("SECTION GATEWAY opens inside SECTION PRODUCT" in p
               for p in ctg_ini.validate(bad("ctg-section-without-endsection.ini")))
    assert ctg_ini.validate("SECTION PRODUCT\nhwcrypt=on\n") == ["line 1: SECTION PRODUCT has no ENDSECTION"]


def test_ctg_ini_validator_rejects_an_unknown_cipher_in_ciphersuites():
    assert ctg_ini.validate(bad("ctg-unknown-cipher.ini")) == [
        "line 7: unknown cipher suite 'TLS_RSA_WITH_AES_128_GCM_SHA257' in ciphersuites"]


def test_ctg_ini_validator_rejects_the_study_listing_without_the_ssl_handler():
    problems = ctg_ini.validate(bad("ctg-2015-as-printed.ini"))
    assert len(problems) == 1
    assert "without protocol@ssl.handler" in problems[0]


def test_ctg_ini_validator_rejects_a_split_inside_a_parameter_a_clear_password_and_old_key_ring_placement():
    problems = "\n".join(ctg_ini.validate(bad("ctg-split-inside-a-parameter.ini")))
    assert "may be split only after a ';'" in problems
    assert "keyringpw holds a password in clear text" in problems
    assert "CTG8483W" in problems


def test_java_security_check_rejects_the_study_two_provider_list():
    assert jvm.java_security_problems(bad("java-security-2015-two-providers.security")) == [
        "no software JCE provider (IBMJCE) after IBMJCECCA: algorithms IBMJCECCA does not implement "
        "fail instead of falling back"]


def test_java_security_check_rejects_software_jce_before_ibmjcecca():
    problems = jvm.java_security_problems(bad("java-security-software-jce-first.security"))
    assert problems == [p for p in problems if "comes before IBMJCECCA" in p]
    assert problems


@pytest.mark.snippet("ctg/ctgstart-stdenv.txt", checker="jvm-options")
def test_jvm_options_carry_the_j_prefix_and_compressedrefs_is_flagged_ibm_specific():
    text = read("ctg/ctgstart-stdenv.txt")
    assert jvm.stdenv_problems(text) == []
    assert jvm.ibm_specific(text) == ["-Xcompressedrefs"]


def test_jvm_option_check_rejects_a_missing_j_prefix_and_an_unknown_option():
    problems = "\n".join(jvm.stdenv_problems(bad("stdenv-hotspot-option.txt")))
    assert "'-Xmx2048M' lacks ctgstart's -j prefix" in problems
    assert "'-XX:+UseG1GC' is not in the table" in problems
