"""tls-as-written reads the protocol and suite lists as the configuration writes them. That every current server
configuration passes and every negative case fails is checks/test_static_checkers.py's (checker tls-as-written in
zrunbook/checkers.toml); here: that each study configuration fails for its own reasons, the name mapping, the
policy table against the suites the other facts tables name, and that a one-snippet `make check` runs the checker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zrunbook import FACTS, ROOT, SNIPPETS, registry
from zrunbook import facts as facts_tables
from zrunbook.static import tls_as_written as tls

BAD = Path(__file__).parent / "bad" / "tls-as-written"

# The study snippets the pages show as they were: each must fail, and for these reasons (words of the sentences).
STUDY = {
    "ihs/apache/apache-tls-2013-equivalent.conf": ["TLS 1.0 is switched on", "TLS 1.1 is switched on",
                                                   "AES256-SHA (TLS_RSA_WITH_AES_256_CBC_SHA)", "'@SECLEVEL=0'"],
    "ihs/httpd/httpd-ssl-2013.conf": ["TLS 1.0 is switched on", "TLS 1.1 is switched on",
                                      "suite TLS_RSA_WITH_AES_256_CBC_SHA is outside"],
    "was/wsadmin/set-ssl-config-2013.py": ["no protocol list is written", "SSL_RSA_WITH_AES_256_CBC_SHA"],
    "webseal/conf/webseald-pkcs11-2007.conf": ["no disable-tls-v1 = yes", "no disable-tls-v11 = yes",
                                               "TLS_RSA_WITH_AES_128_CBC_SHA", "3DES"],
    "ctg/ctg-ssl-2015.ini": ["no protocol list is written", "SSL_RSA_WITH_AES_128_CBC_SHA"],
}


@pytest.mark.negative("ctg/ctg-ssl-2015.ini", "ihs/apache/apache-tls-2013-equivalent.conf",
                      "ihs/httpd/httpd-ssl-2013.conf", "was/wsadmin/set-ssl-config-2013.py",
                      "webseal/conf/webseald-pkcs11-2007.conf",
                      expects="tls-as-written reports each study configuration's own weaknesses")
@pytest.mark.uses("ctg/ctg-ssl-2015.ini", "ihs/apache/apache-tls-2013-equivalent.conf", "ihs/httpd/httpd-ssl-2013.conf",
                  "was/wsadmin/set-ssl-config-2013.py", "webseal/conf/webseald-pkcs11-2007.conf")
@pytest.mark.parametrize("rel", sorted(STUDY))
def test_a_study_configuration_fails_for_its_own_reasons(rel):
    found = "\n".join(tls.file_problems(SNIPPETS / rel))
    for words in STUDY[rel]:
        assert words in found, f"{rel}: expected {words!r} among:\n{found}"


@pytest.mark.parametrize("bad", sorted(p.name for p in BAD.iterdir()))
def test_a_negative_case_is_rejected(bad):
    problems = tls.file_problems(BAD / bad)
    assert problems, f"tls-as-written accepted checks/static/bad/tls-as-written/{bad}"
    assert not any("no TLS server configuration" in p for p in problems), problems  # rejected for its lists


@pytest.mark.negative(invariant="the registry's bad globs name every negative case",
                      expects="a bad file of tls-as-written the registry does not name fails")
def test_the_registry_names_every_negative_case_of_this_directory():
    bad = {rel for name, rel in registry.bad_cases() if name == "tls-as-written"}
    assert {f"static/bad/tls-as-written/{p.name}" for p in BAD.iterdir()} <= bad


@pytest.mark.parametrize(("written", "suite"), [
    ("ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
    ("ECDHE-ECDSA-CHACHA20-POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"),
    ("AES256-SHA", "TLS_RSA_WITH_AES_256_CBC_SHA"),
    ("DES-CBC3-SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA"),
    ("DHE-RSA-AES128-CCM8", "TLS_DHE_RSA_WITH_AES_128_CCM_8"),
    ("SSL_RSA_WITH_AES_256_CBC_SHA", "TLS_RSA_WITH_AES_256_CBC_SHA"),
    ("TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"),
])
def test_names_map_to_one_suite(written, suite):
    assert tls.iana(written) == suite


@pytest.mark.parametrize("word", ["HIGH", "DEFAULT", "ALL", "AESGCM", "ECDHE+AESGCM", "!aNULL", "@SECLEVEL=0",
                                  "AES256", "kECDHE", "ECDHE-ECDSA", "-SHA"])
def test_a_keyword_is_no_suite(word):
    assert tls.iana(word) is None


@pytest.mark.parametrize(("suite", "allowed"), [
    ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", True), ("TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", True),
    ("TLS_CHACHA20_POLY1305_SHA256", True), ("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", False),
    ("TLS_RSA_WITH_AES_256_GCM_SHA384", False), ("TLS_ECDH_RSA_WITH_AES_256_CBC_SHA", False),
    ("TLS_RSA_WITH_RC4_128_MD5", False), ("TLS_AES_128_CCM_8_SHA256", False),
])
def test_the_policy_allows_forward_secret_aead_suites_only(suite, allowed):
    assert (tls.suite_problem(suite, suite) is None) is allowed


def _suite_names() -> set[str]:
    tables = {"crypto/cipher-suites.csv": "cipher suite (IANA)", "was/cipher-suites.csv": "suite",
              "ihs/ihs-ciphers.csv": "long_name", "ctg/ctg-ciphers.csv": "suite", "webseal/qop-ciphers.csv": "name"}
    return {r[col] for table, col in tables.items() for r in facts_tables.load(FACTS / table)}


@pytest.mark.parametrize("name", sorted(_suite_names()))
def test_every_suite_the_facts_tables_name_gets_a_verdict(name):
    """The policy table covers every key exchange and cipher the other tables name: none is 'not in the table'."""
    suite = tls.iana(name)
    assert suite, name
    assert "not in the policy table" not in (tls.suite_problem(name, suite) or "")


def test_a_list_of_aead_suites_keeps_old_protocols_out_without_a_protocol_list():
    gcm = tls.Endpoint("x", protocol_default="CTG protocol", suites=[(1, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")])
    cbc = tls.Endpoint("x", protocol_default="CTG protocol", suites=[(1, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256")])
    assert tls.judge(gcm) == []
    assert any("no protocol list is written" in p for p in tls.judge(cbc))


def test_ihs_additions_to_an_uncleared_list_are_reported():
    text = ("SSLEnable\nSSLProtocolDisable SSLv2 SSLv3 TLSv10 TLSv11\n"
            "SSLCipherSpec TLSv12 +C02F\n")
    assert any("did not clear" in p for ep in tls.ihs(text) for p in tls.judge(ep))


def test_a_jsse_family_is_the_protocols_it_enables():
    assert tls.jsse_protocols("SSL_TLSv2") == {"TLS 1.0", "TLS 1.1", "TLS 1.2"}
    assert tls.jsse_protocols("TLSv1.3,TLSv1.2") == {"TLS 1.2", "TLS 1.3"}


def test_a_file_the_checker_cannot_read_is_a_problem(tmp_path):
    path = tmp_path / "empty.conf"
    path.write_text("# nothing\n", encoding="utf-8")
    assert tls.file_problems(path)


def test_a_one_snippet_make_check_runs_this_checker():
    """`make check SNIPPET=X` passes --zr-only=X to pytest over checks/ (checks/invariants/test_invariants.py::
    test_a_narrowed_make_check_runs_only_what_was_asked_without_the_invariant); the same collection keeps this
    checker's test of X."""
    rel = "was/liberty/server.xml"
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0",
                          f"--zr-only={rel}", "checks"], cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    assert f"test_static_checker_accepts_the_snippet[tls-as-written:{rel}]" in out, out[-2000:]
