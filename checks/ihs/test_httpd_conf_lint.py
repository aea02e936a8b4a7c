"""IHS httpd.conf: Apache's httpd -t on a container host with the mod_ibm_ssl lint module.

The module (checks/ihs/mod_ibm_ssl/mod_ibm_ssl.c) is built with apxs in the container once per
session and loaded as IHS loads its own (LoadModule ibm_ssl_module modules/mod_ibm_ssl.so); a
minimal IHS tree includes the snippet. The negative cases under checks/ihs/bad/ prove the lint
rejects what IHS would: unknown protocol and cipher names, a wrong argument count, SSLServerCert
without a token while SSLPKCSDriver is set, and the study's library and cache directives.
"""

import pytest

from checks.ihs.ihs_lint import httpd_t, ihs_root
from checks.ihs.test_gskit_snippets import BAD, SNIPPETS


def output(result):
    return f"rc={result.rc}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


@pytest.mark.snippet("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/httpd-ssl-2013.conf", checker="httpd-t")
@pytest.mark.parametrize("name", ["httpd-ssl-current.conf", "httpd-ssl-2013.conf"])
def test_ihs_ssl_configuration_passes_httpd_t_with_the_mod_ibm_ssl_lint(host, name):
    conf = ihs_root(host, (SNIPPETS / "ihs/httpd" / name).read_text(encoding="utf-8"))
    result = httpd_t(host, conf)
    assert result.rc == 0, output(result)
    assert "Syntax OK" in result.stderr, output(result)


REJECTED = {
    "httpd-ssl-unknown-protocol.conf": "unknown protocol TLSv1.1",
    "httpd-ssl-unknown-cipher.conf": "unknown cipher AES256-SHA",
    "httpd-ssl-servercert-without-token.conf": "SSLServerCert ihscert",
    "httpd-ssl-attributeset-one-argument.conf": "SSLAttributeSet takes two arguments",
    "httpd-ssl-2013-pkcs11-api-so64.conf": "PKCS11_API.so64 does not exist",
    "httpd-ssl-2013-cache-port-filename.conf": "SSLCachePortFilename is obsolete",
}


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/httpd-ssl-2013.conf", checker="httpd-t")
@pytest.mark.parametrize("bad", sorted(REJECTED))
def test_httpd_t_with_the_lint_rejects_the_bad_configuration(host, bad):
    conf = ihs_root(host, (BAD / bad).read_text(encoding="utf-8"))
    result = httpd_t(host, conf)
    assert result.rc != 0, output(result)
    assert REJECTED[bad] in result.stderr, output(result)
