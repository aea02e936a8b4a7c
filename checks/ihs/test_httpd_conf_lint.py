"""IHS httpd.conf: Apache's httpd -t on a container host with the mod_ibm_ssl lint module.

The module (checks/standins/ihs/mod_ibm_ssl/mod_ibm_ssl.c) is built with apxs in the container once per
session and loaded as IHS loads its own (LoadModule ibm_ssl_module modules/mod_ibm_ssl.so); a
minimal IHS tree includes the snippet. The negative cases under checks/ihs/bad/ prove the lint
rejects what IHS would: unknown protocol and cipher names, a wrong argument count, SSLServerCert
without a token while SSLPKCSDriver is set, the study's library, and a sidd socket path no socket can have.

The current configuration includes conf/pkcs11-driver.conf, one line per distribution. The hosts are
Debian: the Ubuntu/Debian line is checked as shipped (on amd64 with the host's triplet), and a copy of it
naming the RHEL/SLES library is rejected. The RHEL/SLES files are checked with a stand-in library (see
the test's docstring).
"""

from pathlib import Path

import pytest

from checks.standins.ihs.ihs_lint import httpd_t, ihs_root
from zrunbook import SNIPPETS
from zrunbook.ihs.distro_paths import current_conf, driver_fragment, included, library, on_host

BAD = Path(__file__).parent / "bad"


def output(result):
    return f"rc={result.rc}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def current(host, driver: str, rhel_stand_in: bool = False) -> str:
    """The IHS tree with httpd-ssl-current.conf and the given text as its conf/pkcs11-driver.conf."""
    main = current_conf()
    return ihs_root(host, main, includes={included(main): driver}, rhel_stand_in=rhel_stand_in)


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.arch_dependent("the Ubuntu/Debian driver names a multiarch library path")
@pytest.mark.snippet("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf",
                     checker="httpd-t")
def test_current_configuration_with_the_ubuntu_debian_driver_passes_httpd_t(host):
    """No stand-in: the lint loads the openCryptoki library the Ubuntu/Debian line names."""
    result = httpd_t(host, current(host, on_host(host, driver_fragment("ubuntu-debian"))))
    assert result.rc == 0, output(result)
    assert "Syntax OK" in result.stderr, output(result)


@pytest.mark.negative("ihs/httpd/pkcs11-driver-ubuntu-debian.conf",
                      expects="httpd -t fails: SSLPKCSDriver names a library file that does not exist")
@pytest.mark.uses("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.arch_dependent("the Ubuntu/Debian driver names a multiarch library path")
@pytest.mark.snippet("ihs/httpd/pkcs11-driver-ubuntu-debian.conf", checker="httpd-t")
def test_httpd_t_rejects_the_ubuntu_debian_driver_naming_the_rhel_library(host):
    wrong = driver_fragment("ubuntu-debian").replace(library("ubuntu-debian"), library("rhel-sles"))
    result = httpd_t(host, current(host, wrong))
    assert result.rc != 0, output(result)
    assert f"SSLPKCSDriver: file {library('rhel-sles')} does not exist" in result.stderr, output(result)


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet("ihs/httpd/httpd-ssl-current.conf", checker="httpd-t")
def test_httpd_t_names_the_driver_file_when_the_reader_has_not_saved_it(host):
    main = current_conf()
    result = httpd_t(host, ihs_root(host, main))
    assert result.rc != 0, output(result)
    assert f"Could not open configuration file /opt/IBM/HTTPServer/{included(main)}" in result.stderr, output(result)


@pytest.mark.uses("ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/pkcs11-driver-rhel-sles.conf",
                     "ihs/httpd/httpd-ssl-2013.conf", checker="httpd-t")
@pytest.mark.parametrize("name", ["httpd-ssl-current.conf+pkcs11-driver-rhel-sles.conf", "httpd-ssl-2013.conf"])
def test_rhel_sles_configuration_passes_httpd_t_with_a_stand_in_library(host, name):
    """RHEL/SLES files on a Debian host, with one documented stand-in.

    The lint loads the library SSLPKCSDriver names, and Debian has nothing at
    /usr/lib64/opencryptoki/libopencryptoki.so, the RHEL/SLES path (and SLES 11's, the 2013 study's).
    For these tests only, that one path is a symbolic link to the host's openCryptoki library; the
    files are used as shipped. What this proves: directive forms, values and the library form; not that
    the path exists on RHEL or SLES (the reference facts and the distributions' file lists say so).
    """
    if name == "httpd-ssl-2013.conf":
        conf = ihs_root(host, (SNIPPETS / "ihs/httpd" / name).read_text(encoding="utf-8"), rhel_stand_in=True)
    else:
        conf = current(host, driver_fragment("rhel-sles"), rhel_stand_in=True)
    result = httpd_t(host, conf)
    assert result.rc == 0, output(result)
    assert "Syntax OK" in result.stderr, output(result)


REJECTED = {
    "httpd-ssl-unknown-protocol.conf": "unknown protocol TLSv1.1",
    "httpd-ssl-unknown-cipher.conf": "unknown cipher AES256-SHA",
    "httpd-ssl-servercert-without-token.conf": "SSLServerCert ihscert",
    "httpd-ssl-attributeset-one-argument.conf": "SSLAttributeSet takes two arguments",
    "httpd-ssl-2013-pkcs11-api-so64.conf": "PKCS11_API.so64 does not exist",
    "httpd-ssl-cache-port-filename-too-long.conf": "is too long for a Unix socket path",
}


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/httpd-ssl-2013.conf", checker="httpd-t")
@pytest.mark.parametrize("bad", sorted(REJECTED))
def test_httpd_t_with_the_lint_rejects_the_bad_configuration(host, bad):
    """The bad files keep the study's RHEL/SLES library path, so they run with the stand-in library of the
    test above: each must be rejected for its own mistake, not for the path."""
    conf = ihs_root(host, (BAD / bad).read_text(encoding="utf-8"), rhel_stand_in=True)
    result = httpd_t(host, conf)
    assert result.rc != 0, output(result)
    assert REJECTED[bad] in result.stderr, output(result)


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
def test_httpd_t_with_the_lint_accepts_the_studys_sidd_socket_line(host):
    """IHS 9.0.5 still documents sidd and SSLCachePortFilename, so the study's own line passes; only a path
    too long for a Unix socket is rejected (the negative case above)."""
    bad = (BAD / "httpd-ssl-cache-port-filename-too-long.conf").read_text(encoding="utf-8")
    study = "\n".join("SSLCachePortFilename /opt/IBM/HTTPServer/logs/siddport"
                      if line.startswith("SSLCachePortFilename") else line for line in bad.splitlines())
    result = httpd_t(host, ihs_root(host, study, rhel_stand_in=True))
    assert result.rc == 0, output(result)
    assert "Syntax OK" in result.stderr, output(result)


# IBM's table lists TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA for TLS 1.0 to 1.2; GSKit 8.0.60.5 under the project's harness
# refused it in the TLS 1.1 list (facts/ihs/ihs-ciphers.csv, gskit_8_0_60). IHS itself never ran here.
TLS11_ECDHE_CBC = """LoadModule ibm_ssl_module modules/mod_ibm_ssl.so
<VirtualHost *:443>
    ServerName www.example.com
    SSLEnable
    SSLProtocolDisable SSLv2 SSLv3 TLSv10
    SSLCipherSpec ALL NONE
    SSLCipherSpec TLSv11 +{cipher}
</VirtualHost>
KeyFile /opt/IBM/HTTPServer/ssl/key.kdb
"""


@pytest.mark.negative(invariant="the IHS lint judges ciphers by IBM's table and names the harness where they differ",
                      expects="a cipher IBM's table does not list for the protocol is rejected")
@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
def test_httpd_t_warns_naming_the_harness_where_only_the_harness_refused_a_cipher_ibms_table_lists(host):
    """Where IBM's table and the harness disagree, the lint passes the line and warns, naming the harness and its
    GSKit level; a cipher IBM's table does not list for the protocol is still rejected (the contrast case)."""
    listed = TLS11_ECDHE_CBC.format(cipher="TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA")
    result = httpd_t(host, ihs_root(host, listed, rhel_stand_in=True))
    assert result.rc == 0, output(result)
    assert "Syntax OK" in result.stderr, output(result)
    assert ("IBM's table lists cipher TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA for TLSv11, but GSKit 8.0.60.5 under the "
            "project's harness (checks/standins/ihs/gskit_server.py) refused it (13 GSK_INVALID_PARAMETER") \
        in result.stderr, output(result)
    unlisted = TLS11_ECDHE_CBC.format(cipher="TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
    result = httpd_t(host, ihs_root(host, unlisted, rhel_stand_in=True))
    assert result.rc != 0, output(result)
    assert "cipher TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 is not valid for TLSv11" in result.stderr, output(result)
