"""The GSKit steps (gskcapicmd today, gskcmd in 2013, sslstash): commands, flags and consistency.

GSKit cannot run on the container hosts, so these checks read the snippets: every command and flag
is checked against facts/ihs/gskit-commands.csv (with sources), and what the steps create
(token label, certificate label, CN, library, key database, stash file) must be what httpd.conf
names. The study's own mismatches are the negative cases under checks/ihs/bad/.
"""

from pathlib import Path

import pytest

from zrunbook import SNIPPETS
from zrunbook.formats import gskit
from zrunbook.ihs.distro_paths import DISTROS, current_with_driver, driver_fragment, library

ROOT = Path(__file__).resolve().parents[2]
BAD = Path(__file__).parent / "bad"

CURRENT = ["create-key-database.sh", "create-token-certificate.sh", "list-token-certificates.sh",
           "stash-token-pin.sh"]
STUDY = ["create-key-database-2013.sh", "create-token-certificate-2013.sh",
         "list-token-certificates-2013.sh", "stash-token-pin.sh"]


def scripts(names):
    return {n: (SNIPPETS / "ihs/gskit" / n).read_text(encoding="utf-8") for n in names}


def conf(name):
    return (SNIPPETS / "ihs/httpd" / name).read_text(encoding="utf-8")


def on_distro(distro):
    """The environment the current scripts run with on the distribution: the library they find there."""
    return {"PKCS11_LIB": gskit.library_candidates(scripts(CURRENT)["create-token-certificate.sh"])[distro]}


@pytest.mark.snippet("ihs/gskit/create-key-database.sh", "ihs/gskit/create-token-certificate.sh",
                     "ihs/gskit/list-token-certificates.sh", "ihs/gskit/stash-token-pin.sh",
                     "ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/pkcs11-driver-*.conf",
                     checker="gskit-httpd-consistency")
@pytest.mark.parametrize("distro", DISTROS)
def test_current_httpd_conf_names_the_token_certificate_and_files_the_gskit_steps_create(distro):
    made = gskit.created(scripts(CURRENT), on_distro(distro))
    assert set(made) == {"kdb", "token", "label", "crypto", "cn", "stash"}
    name = f"httpd-ssl-current.conf + pkcs11-driver-{distro}.conf"
    assert gskit.consistency(scripts(CURRENT), current_with_driver(distro), name, on_distro(distro)) == []


@pytest.mark.uses("ihs/gskit/create-key-database.sh", "ihs/gskit/create-token-certificate.sh",
                  "ihs/gskit/list-token-certificates.sh", "ihs/gskit/stash-token-pin.sh",
                  "ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet("ihs/httpd/pkcs11-driver-ubuntu-debian.conf", checker="gskit-httpd-consistency")
def test_consistency_check_reports_an_ubuntu_debian_driver_naming_the_rhel_library():
    wrong = driver_fragment("ubuntu-debian").replace(library("ubuntu-debian"), library("rhel-sles"))
    problems = gskit.consistency(scripts(CURRENT), current_with_driver("ubuntu-debian", wrong), "httpd.conf",
                                 on_distro("ubuntu-debian"))
    assert len(problems) == 1, problems
    assert problems[0].startswith("PKCS#11 library"), problems
    assert f"creates {library('ubuntu-debian')!r}" in problems[0]
    assert f"names {library('rhel-sles')!r}" in problems[0]


@pytest.mark.snippet("ihs/gskit/create-key-database-2013.sh", "ihs/gskit/create-token-certificate-2013.sh",
                     "ihs/gskit/list-token-certificates-2013.sh", "ihs/gskit/stash-token-pin.sh",
                     "ihs/httpd/httpd-ssl-2013.conf", checker="gskit-httpd-consistency")
def test_corrected_2013_httpd_conf_names_the_token_certificate_and_files_the_gskit_steps_create():
    assert gskit.study_set() == (scripts(STUDY), conf("httpd-ssl-2013.conf"))
    assert gskit.consistency(*gskit.study_set()) == []


@pytest.mark.snippet("ihs/gskit/*.sh", checker="gskit-cmd")
def test_validator_rejects_the_studys_gskcmd_line_broken_after_label():
    problems = gskit.validate((BAD / "gskcmd-label-split-across-lines-2013.sh").read_text())
    assert any("-label needs a value" in p for p in problems), problems
    # the options after the break (-crypto, -tokenlabel, -pw) are lost to a second command
    assert any("name a key store with -db or -crypto" in p for p in problems), problems


@pytest.mark.snippet("ihs/gskit/*.sh", checker="gskit-cmd")
def test_validator_rejects_the_studys_key_database_password_on_the_command_line():
    problems = gskit.validate((BAD / "gskcmd-literal-kdb-password-2013.sh").read_text())
    assert problems == ["line 9: gskcmd -keydb -create: -pw must come from an environment variable, not '1234'"]


@pytest.mark.uses("ihs/gskit/create-key-database-2013.sh", "ihs/gskit/stash-token-pin.sh")
@pytest.mark.snippet("ihs/httpd/httpd-ssl-2013.conf", checker="gskit-httpd-consistency")
def test_consistency_check_reports_the_studys_certificate_cn_that_differs_from_servername():
    bad = scripts(["create-key-database-2013.sh", "stash-token-pin.sh"])
    bad["cn.sh"] = (BAD / "create-token-certificate-cn-washnode1-2013.sh").read_text()
    assert gskit.validate(bad["cn.sh"]) == []
    problems = gskit.consistency(bad, conf("httpd-ssl-2013.conf"))
    assert len(problems) == 1, problems
    assert problems[0].startswith("certificate CN and ServerName"), problems
    assert "'washnode1.net'" in problems[0]
    assert "'wasnode1.net'" in problems[0]


@pytest.mark.uses("ihs/gskit/create-key-database-2013.sh", "ihs/gskit/list-token-certificates-2013.sh",
                  "ihs/gskit/stash-token-pin.sh")
@pytest.mark.snippet("ihs/gskit/create-token-certificate-2013.sh", checker="gskit-httpd-consistency")
def test_consistency_check_reports_the_slides_certificate_label_that_was_never_created():
    slides = (BAD / "httpd-ssl-2013-slides-cert-label.conf").read_text()
    problems = gskit.consistency(scripts(STUDY), slides)
    assert len(problems) == 1, problems
    assert problems[0].startswith("certificate label"), problems
    assert "'ihs-cert'" in problems[0]

