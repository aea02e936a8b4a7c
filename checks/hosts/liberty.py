"""Open Liberty, the open-source core of WebSphere Liberty, for the Liberty page's checks.

``runtime()`` (zrunbook/was/liberty.py: the pinned runtime from Maven Central, unpacked once under
build/cache/openliberty/) gives the ``wlp`` folder; the checks mount it read-only at ``/opt/wlp`` in a container host
started from the WAS chapter's VERIFY_KEY state (the token ready for wasadmin, the page's token configuration at
/etc/websphere/pkcs11-ica-token.cfg, the server key generated in the token). The server's own files live in
WLP_USER_DIR and WLP_OUTPUT_DIR under /tmp/liberty.

``install(host)`` puts the page's server.xml, jvm.options and provider file where the page says; ``start(host)``
runs the page's start-server.sh as wasadmin. ``sign_with_test_ca(host)`` replaces the token key's self-signed
certificate with one a test CA signed (keytool -certreq / -importcert against the token, as a reader does with
their CA), so that a policy scan can validate the chain.
"""

from __future__ import annotations

from checks.hosts.steps import snippet_path
from checks.hosts.token import PINS
from checks.hosts.util import ok
from zrunbook.was.liberty import VERSION, runtime  # noqa: F401 (the harness's callers use them)

IN_CONTAINER = "/opt/wlp"
SERVER = "tokensrv"
USER_DIR = "/tmp/liberty/usr"
OUTPUT_DIR = "/tmp/liberty/out"
SERVER_DIR = f"{USER_DIR}/servers/{SERVER}"
PROVIDERS = "/etc/websphere/liberty-pkcs11.security"  # where the page installs the provider file
LOG = f"{OUTPUT_DIR}/{SERVER}/logs/messages.log"
PORT = 9443
CA = "/tmp/liberty/ca"
ENV = f"WLP_DIR={IN_CONTAINER} WLP_USER_DIR={USER_DIR} WLP_OUTPUT_DIR={OUTPUT_DIR}"
KEYTOOL = (f"keytool -keystore NONE -storetype PKCS11 -providerName SunPKCS11-IBMICATOK "
           f"-J-Djava.security.properties={PROVIDERS} -storepass {PINS['TOKEN_USER_PIN']}")


def install(host) -> None:
    """The page's files where the page puts them: server.xml and jvm.options in the server's folder, the
    provider file beside the token configuration."""
    ok(host, f"mkdir -p {SERVER_DIR} {OUTPUT_DIR} && cp {snippet_path('was/liberty/server.xml')} "
             f"{snippet_path('was/liberty/jvm.options')} {SERVER_DIR}/ && "
             f"cp {snippet_path('was/liberty/liberty-pkcs11.security')} {PROVIDERS} && chmod 644 {PROVIDERS} && "
             f"chown -R wasadmin {USER_DIR} {OUTPUT_DIR}")


def start(host, pin: str | None = None):
    """The page's start-server.sh as wasadmin with the token PIN in the environment; its CommandResult."""
    pin = PINS["TOKEN_USER_PIN"] if pin is None else pin
    return host.run(f"cd /tmp && runuser -u wasadmin -- env {ENV} TOKEN_USER_PIN={pin} "
                    f"bash {snippet_path('was/liberty/start-server.sh')} {SERVER}")


def stop(host) -> None:
    host.run(f"runuser -u wasadmin -- env {ENV} {IN_CONTAINER}/bin/server stop {SERVER}")


def sign_with_test_ca(host) -> str:
    """The token key's certificate replaced by one a test CA signed (with the extensions a strict validator
    wants); returns the CA certificate's path."""
    ok(host, f"mkdir -p {CA} && cd {CA} && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem "
             "-days 30 -subj '/CN=zrunbook test CA' -addext basicConstraints=critical,CA:TRUE "
             "-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null && "
             "printf '%s\\n' subjectAltName=DNS:localhost extendedKeyUsage=serverAuth "
             "keyUsage=critical,digitalSignature authorityKeyIdentifier=keyid > leaf.ext && chmod -R a+rX .")
    ok(host, "mkdir -p /tmp/liberty/req && chown wasadmin /tmp/liberty/req")
    ok(host, f"cd /tmp && runuser -u wasadmin -- {KEYTOOL} -certreq -alias was-server -file /tmp/liberty/req/was.csr")
    ok(host, f"cd {CA} && openssl x509 -req -in /tmp/liberty/req/was.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-days 90 -extfile leaf.ext -out signed.pem 2>/dev/null && cat signed.pem ca.pem > chain.pem && "
             "chmod a+r chain.pem")
    ok(host, f"cd /tmp && runuser -u wasadmin -- {KEYTOOL} -importcert -noprompt -alias was-server "
             f"-file {CA}/chain.pem")
    return f"{CA}/ca.pem"
