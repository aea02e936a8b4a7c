"""OpenJDK stand-ins for WebSphere on a container host: Java sources of the WAS checks run against the token.

``PKCS11_CHECK``: zrunbook/was/Pkcs11Check.java, which loads token configuration files into SunPKCS11 (the
strictest parser of IBMPKCS11Impl's format at hand); ``SUNPKCS11_REJECTS``: what it says about each study
mistake under checks/was/bad/ (the WAS and errata checks both assert it).
``VERIFY_KEY``: a prepared state (steps.State) with the token ready for wasadmin (zrunbook/hosts/token.py)
and the key and certificate of zrunbook/was/TokenHttpsServer.java made IN the token with keytool;
``start_server(host)`` starts that HTTPS server on 9443 with the protocols and suites
set-ssl-config-current.py gives WebSphere and returns the certificate's path (the CA file of a check).
The Java sources stay beside the WAS checks, where the guide names them; they are test scaffolding read
as data, and the states hash them (State.files).
"""

from __future__ import annotations

import ast

from zrunbook import SNIPPETS
from zrunbook.hosts import engine as eng
from zrunbook.hosts.steps import State
from zrunbook.hosts.token import PINS, ready_token, slot_of
from zrunbook.hosts.util import compile_java, copy_to, output
from zrunbook.ihs.distro_paths import library, on_host

PKCS11_CHECK = "zrunbook/was/Pkcs11Check.java"
SERVER = "zrunbook/was/TokenHttpsServer.java"
SSL_NOW = "was/wsadmin/set-ssl-config-current.py"
AS_WAS = "cd /tmp/verify && runuser -u wasadmin --"
# keytool's options for the token keystore (SunPKCS11 with /tmp/verify/token.cfg) and the server's alias
STORE = (f"-keystore NONE -storetype PKCS11 -providerClass sun.security.pkcs11.SunPKCS11 "
         f"-providerArg /tmp/verify/token.cfg -storepass {PINS['TOKEN_USER_PIN']} -alias was-server")

SUNPKCS11_REJECTS = {
    "description-with-parentheses.cfg": "Unexpected",
    "key-in-wrong-case.cfg": "Unknown keyword 'SlotListIndex'",
    "library-relative-path.cfg": "Absolute path required",
}


def current_suites() -> list[str]:
    """The suites set-ssl-config-current.py gives WebSphere (its SUITES list, read, not copied)."""
    tree = ast.parse((SNIPPETS / SSL_NOW).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SUITES"]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"snippets/{SSL_NOW} assigns no SUITES list")


def opencryptoki(host) -> str:
    """The host's openCryptoki PKCS#11 library (the Ubuntu/Debian path with the host's triplet)."""
    return on_host(host, library("ubuntu-debian"))


def make_key(host) -> str:
    """The token ready for wasadmin, then the server's key and certificate made in the token as wasadmin
    with keytool; returns the certificate's path."""
    token = ready_token(host, "wasadmin")
    copy_to(host, f"name = {token.label}\nlibrary = {opencryptoki(host)}\nslot = {slot_of(host)}\n",
            "/tmp/verify/token.cfg")
    copy_to(host, (eng.REPO / SERVER).read_text(encoding="utf-8"), "/tmp/verify/TokenHttpsServer.java")
    compile_java(host, "/tmp/verify/TokenHttpsServer.java")
    host.run_test("chmod -R a+rwX /tmp/verify")
    gen = host.run(f"{AS_WAS} keytool -genkeypair {STORE} -keyalg RSA -keysize 2048 -dname CN=localhost "
                   "-ext san=dns:localhost -validity 30")
    assert gen.rc == 0, output(gen)
    host.run_test(f"{AS_WAS} keytool -exportcert -rfc {STORE} -file /tmp/verify/was-server.pem")
    return "/tmp/verify/was-server.pem"


VERIFY_KEY = State("was-verify-key", make_key, snippets=("crypto",), files=(SERVER,))


def start_server(host) -> str:
    """The server started on a host from VERIFY_KEY (key and certificate in the token); returns the CA path."""
    host.run_test(f"{AS_WAS} sh -c 'TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} nohup java -cp . TokenHttpsServer "
                  f"token.cfg was-server 9443 TLSv1.2,TLSv1.3 {','.join(current_suites())} > server.log 2>&1 &'")
    host.run_test("for i in $(seq 240); do grep -q listening /tmp/verify/server.log && exit 0; sleep 0.5; done; "
                  "cat /tmp/verify/server.log; exit 1")
    return host.zr_prepared
