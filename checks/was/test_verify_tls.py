"""The reader's verification, run for real against a stand-in for WebSphere's HTTPS transport: a Java HTTPS
server (zrunbook/was/TokenHttpsServer.java, OpenJDK 21 + SunPKCS11; zrunbook/hosts/jsse.py starts it) whose
private key and certificate were generated IN the token with keytool, offering exactly the protocols and suites
set-ssl-config-current.py gives WebSphere. check-tls-handshake.sh must show TLS 1.3 and TLS 1.2 with those
suites and a verified certificate; once the key object is deleted from the token, the running server can no
longer complete a handshake: the token, not a copy in the JVM, signed.
"""

import re

import pytest

from zrunbook.hosts.jsse import SSL_NOW, VERIFY_KEY, opencryptoki, start_server
from zrunbook.hosts.steps import snippet_path
from zrunbook.hosts.token import PINS, slot_of
from zrunbook.hosts.util import output
from zrunbook.shown_output import assert_shown_output, normalise_common

HANDSHAKE = "was/verify/check-tls-handshake.sh"
HANDSHAKE_OUT = "was/verify/check-tls-handshake.out"
pytestmark = pytest.mark.from_state(VERIFY_KEY)


@pytest.fixture
def server(fresh_host):
    return fresh_host, start_server(fresh_host)


@pytest.mark.snippet(HANDSHAKE, checker="testinfra")
@pytest.mark.snippet(HANDSHAKE_OUT, checker="output-regenerated")
@pytest.mark.snippet(SSL_NOW, checker="testinfra")
def test_handshakes_use_the_current_suites_and_the_token_signs_each(server):
    host, ca = server
    assert "token object" in host.file("/tmp/verify/server.log").content_string
    tls13 = host.run(f"CA_FILE={ca} bash {snippet_path(HANDSHAKE)} localhost:9443")
    assert tls13.rc == 0, output(tls13)
    assert "SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384" in tls13.stdout, output(tls13)
    assert "SSL certificate verify ok." in tls13.stdout
    tls12 = host.run(f"curl -sS -v -o /dev/null --tls-max 1.2 --cacert {ca} https://localhost:9443/")
    assert "SSL connection using TLSv1.2 / ECDHE-RSA-AES256-GCM-SHA384" in tls12.stderr, output(tls12)
    # The private key object removed from the token: the running server can no longer sign, so the token did.
    tool = (f"runuser -u wasadmin -- pkcs11-tool --module {opencryptoki(host)} --slot {slot_of(host)} "
            f"--login --pin {PINS['TOKEN_USER_PIN']}")
    delete = host.run(f"id=$({tool} --list-objects --type privkey | awk '/ID:/ {{print $2; exit}}') && "
                      f"test -n \"$id\" && {tool} --delete-object --type privkey --id $id")
    assert delete.rc == 0, output(delete)
    after = host.run(f"CA_FILE={ca} bash {snippet_path(HANDSHAKE)} localhost:9443")
    assert after.rc == 1, output(after)
    if host.zr_name == "debian13-amd64":
        assert_shown_output(HANDSHAKE_OUT, tls13.stdout,
                            lambda t: normalise_common(re.sub(r"(start|expire) date: .*", r"\1 date: <date>", t)))


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(HANDSHAKE, checker="testinfra")
def test_handshake_check_fails_on_an_untrusted_certificate(server):
    host, _ca = server
    result = host.run(f"CA_FILE=/etc/ssl/certs/ca-certificates.crt bash {snippet_path(HANDSHAKE)} localhost:9443")
    assert result.rc == 1, output(result)
    assert "failed" in result.stderr
