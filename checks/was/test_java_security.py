"""The java.security fragments: provider numbering, the PKCS#11 provider after IBMJCEPlus in the current list and
first in the study's, its configuration path on the same line (zrunbook/formats/java_security.py), and the path the
same one the token configuration is installed as.
"""

import re
from pathlib import Path

import pytest

from zrunbook import SNIPPETS
from zrunbook.formats import java_security

HERE = Path(__file__).resolve().parent

CURRENT = "was/pkcs11/java-security-providers-current.security"
STUDY = "was/pkcs11/java-security-providers-2013.security"
BAD = sorted(p.name for p in (HERE / "bad").glob("*.security"))
WHY = {
    "java-security-path-on-next-line.security": "stands on a line of its own",
    "java-security-2013-pkcs11-not-first.security": "must be security.provider.1",
    "java-security-pkcs11-ahead-of-ibmjceplus.security": "ahead of IBMJCEPlus",
    "java-security-numbering.security": "used twice: [2]",
}


@pytest.mark.snippet(CURRENT, "was/pkcs11/ica-token-*.cfg", checker="java-security")
def test_provider_list_names_the_path_the_token_config_is_installed_as():
    path = java_security.pkcs11_config_path((SNIPPETS / CURRENT).read_text())
    for cfg in sorted((SNIPPETS / "was/pkcs11").glob("ica-token-*.cfg")):
        assert re.search(rf"Install as {re.escape(path)};", cfg.read_text()), cfg.name


@pytest.mark.snippet(STUDY, "was/pkcs11/cex3config-2013.cfg", checker="java-security")
def test_2013_provider_list_names_the_studys_config_file():
    assert java_security.pkcs11_config_path((SNIPPETS / STUDY).read_text()) == "/etc/cex3config.cfg"


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.snippet(CURRENT, STUDY, checker="java-security")
def test_java_security_checker_rejects(bad):
    found = java_security.file_problems(HERE / "bad" / bad)
    assert any(WHY[bad] in p for p in found), found


@pytest.mark.negative("was/pkcs11/java-security-providers-current.security",
                      "was/pkcs11/java-security-providers-2013.security",
                      expects="each list fails under the other's rule: IBMJCEPlus's place, security.provider.1")
@pytest.mark.snippet(CURRENT, STUDY, checker="java-security")
def test_each_list_passes_under_its_own_rule_and_fails_under_the_other():
    current, study = (SNIPPETS / CURRENT).read_text(), (SNIPPETS / STUDY).read_text()
    assert java_security.problems(current) == []
    assert java_security.problems(study, study=True) == []
    assert any("ahead of IBMJCEPlus" in p or "no IBMJCEPlus" in p for p in java_security.problems(study))
    assert any("must be security.provider.1" in p for p in java_security.problems(current, study=True))
