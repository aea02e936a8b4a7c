"""IHS session lifetime: httpd -t with the mod_ibm_ssl lint module, the fragment included as the page says.

httpd-ssl-session-cache.conf is copied into conf/ of a minimal IHS tree and included from the configuration
after mod_ibm_ssl is loaded, as the page says (the chapter's TLS configuration itself is linted by
test_httpd_conf_lint.py; this test stays independent of it). The lint takes
SSLV3Timeout's range from facts/ihs/mod-ibm-ssl-directives.csv; the negative cases under
checks/ihs/bad/ are a lifetime beyond that range and a value with a unit.
"""

from pathlib import Path

import pytest

from checks.hosts.util import output
from checks.standins.ihs.ihs_lint import directive_ranges, httpd_t, ihs_root
from zrunbook import SNIPPETS

BAD = Path(__file__).parent / "bad"

FRAGMENT = "ihs/httpd/httpd-ssl-session-cache.conf"
ROOT = "/opt/IBM/HTTPServer"


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(FRAGMENT, checker="httpd-t")
def test_session_lifetime_fragment_passes_httpd_t_when_included(host):
    main = f"LoadModule ibm_ssl_module modules/mod_ibm_ssl.so\nInclude {ROOT}/conf/httpd-ssl-session-cache.conf\n"
    conf = ihs_root(host, main, root=ROOT)
    host.run_expect([0], f"cp /snippets/{FRAGMENT} {ROOT}/conf/httpd-ssl-session-cache.conf")
    result = httpd_t(host, conf)
    assert result.rc == 0, output(result)
    assert "Syntax OK" in result.stderr, output(result)


@pytest.mark.uses("ihs/httpd/httpd-ssl-session-cache.conf")
def test_fragment_lifetime_lies_in_the_range_of_the_directive_table():
    low, high = directive_ranges()["SSLV3Timeout"]
    words = (SNIPPETS / FRAGMENT).read_text(encoding="utf-8").split()
    assert low <= int(words[words.index("SSLV3Timeout") + 1]) <= high


REJECTED = {
    "httpd-ssl-v3timeout-out-of-range.conf": "SSLV3Timeout 172800 is out of range (0-86400 seconds)",
    "httpd-ssl-v3timeout-with-unit.conf": "SSLV3Timeout takes a number of seconds (0-86400), not 10m",
}


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(FRAGMENT, checker="httpd-t")
@pytest.mark.parametrize("bad", sorted(REJECTED))
def test_httpd_t_with_the_lint_rejects_a_session_lifetime_ihs_does_not_take(host, bad):
    conf = ihs_root(host, (BAD / bad).read_text(encoding="utf-8"), root=ROOT)
    result = httpd_t(host, conf)
    assert result.rc != 0, output(result)
    assert REJECTED[bad] in result.stderr, output(result)
