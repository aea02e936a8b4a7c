"""The Apache token page's Ubuntu/Debian steps ran on amd64 too, with one line of the OpenSSL file changed, so they
are captioned by that (``s390x-path``), not "s390x only"; the file and the page name both paths, and no step asks
for dpkg-architecture, which a clean host lacks."""

import re

import pytest

from zrunbook import ROOT, SNIPPETS
from zrunbook.walkthrough import NEEDS

PAGE = ROOT / "docs/how-to/ihs/05-apache-pkcs11-provider.md"
CONF = SNIPPETS / "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf"


def test_the_token_pages_debian_steps_say_what_they_really_need():
    text = PAGE.read_text(encoding="utf-8")
    needs = re.findall(r"^:needs:\s*(\S+)", text, re.M)
    assert "s390x" not in needs, needs
    assert needs.count("s390x-path") >= 6, needs
    assert "library path" in NEEDS["s390x-path"]
    assert "dpkg-architecture" not in text


@pytest.mark.uses("ihs/apache/openssl-pkcs11-provider-fips-ubuntu-debian.conf",
                  "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf")
def test_the_debian_openssl_file_names_the_path_for_other_architectures():
    for conf in (CONF, CONF.with_name("openssl-pkcs11-provider-fips-ubuntu-debian.conf")):
        text = conf.read_text(encoding="utf-8")
        assert "pkcs11-module-path = /usr/lib/s390x-linux-gnu/pkcs11/libopencryptoki.so" in text, conf
        assert "/usr/lib/x86_64-linux-gnu/pkcs11/libopencryptoki.so" in text, conf  # in a comment, for amd64
