"""The reader's verification, run for real against a stand-in for WebSphere's HTTPS transport: a Java HTTPS
server (checks/was/TokenHttpsServer.java, OpenJDK 21 + SunPKCS11) whose private key and certificate were
generated IN the token with keytool, offering exactly the protocols and suites set-ssl-config-current.py gives
WebSphere. check-tls-handshake.sh must show TLS 1.3 and TLS 1.2 with those suites and a verified certificate;
once the key object is deleted from the token, the running server can no longer complete a handshake: the
token, not a copy in the JVM, signed.
"""

import re
from pathlib import Path

import pytest

from checks.was.test_wsadmin_scripts import CURRENT_SUITES
from zrunbook.hosts.steps import State, snippet_path
from zrunbook.hosts.util import TOKEN, compile_java, copy_to, output, ready_was_token
from zrunbook.shown_output import assert_shown_output, normalise_common

HERE = Path(__file__).resolve().parent

HANDSHAKE = "was/verify/check-tls-handshake.sh"
HANDSHAKE_OUT = "was/verify/check-tls-handshake.out"
SSL_NOW = "was/wsadmin/set-ssl-config-current.py"
PIN = TOKEN
SLOT = {"debian13-amd64": 3, "debian13-s390x": 1}
LIB = {"debian13-amd64": "/usr/lib/x86_64-linux-gnu/pkcs11/libopencryptoki.so",
       "debian13-s390x": "/usr/lib/s390x-linux-gnu/pkcs11/libopencryptoki.so"}
_SERVERS: dict = {}
STORE = (f"-keystore NONE -storetype PKCS11 -providerClass sun.security.pkcs11.SunPKCS11 "
         f"-providerArg /tmp/verify/token.cfg -storepass {PIN['TOKEN_USER_PIN']} -alias was-server")
AS_WAS = "cd /tmp/verify && runuser -u wasadmin --"


def make_key(host) -> str:
    """The WAS token ready, then the server's key and certificate made in the token as wasadmin with
    keytool; returns the certificate's path (the CA file of the check). Made once as the VERIFY_KEY state."""
    ready_was_token(host)
    cfg = f"name = IBMICATOK\nlibrary = {LIB[host.zr_name]}\nslot = {SLOT[host.zr_name]}\n"
    copy_to(host, cfg, "/tmp/verify/token.cfg")
    copy_to(host, (HERE / "TokenHttpsServer.java").read_text(), "/tmp/verify/TokenHttpsServer.java")
    compile_java(host, "/tmp/verify/TokenHttpsServer.java")
    host.run_test("chmod -R a+rwX /tmp/verify")
    gen = host.run(f"{AS_WAS} keytool -genkeypair {STORE} -keyalg RSA -keysize 2048 -dname CN=localhost "
                   "-ext san=dns:localhost -validity 30")
    assert gen.rc == 0, output(gen)
    host.run_test(f"{AS_WAS} keytool -exportcert -rfc {STORE} -file /tmp/verify/was-server.pem")
    return "/tmp/verify/was-server.pem"


VERIFY_KEY = State("was-verify-key", make_key, snippets=("crypto",))
pytestmark = pytest.mark.from_state(VERIFY_KEY)


def start_server(host):
    """The server started on a host from VERIFY_KEY (key and certificate in the token); returns the CA path."""
    host.run_test(f"{AS_WAS} sh -c 'TOKEN_USER_PIN={PIN['TOKEN_USER_PIN']} nohup java -cp . TokenHttpsServer "
                  f"token.cfg was-server 9443 TLSv1.2,TLSv1.3 {','.join(CURRENT_SUITES)} > server.log 2>&1 &'")
    host.run_test("for i in $(seq 240); do grep -q listening /tmp/verify/server.log && exit 0; sleep 0.5; done; "
                  "cat /tmp/verify/server.log; exit 1")
    return host.zr_prepared


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
    tool = (f"runuser -u wasadmin -- pkcs11-tool --module {LIB[host.zr_name]} --slot {SLOT[host.zr_name]} "
            f"--login --pin {PIN['TOKEN_USER_PIN']}")
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
