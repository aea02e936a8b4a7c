"""OpenJDK stand-ins for WebSphere on a container host: Java sources of the WAS checks run against the token.

``PKCS11_CHECK``: checks/standins/was/Pkcs11Check.java, which loads token configuration files into SunPKCS11 (the
strictest parser of IBMPKCS11Impl's format at hand); ``SUNPKCS11_REJECTS``: what it says about each study
mistake under checks/was/bad/ (the WAS and errata checks both assert it).
``VERIFY_KEY``: a prepared state (steps.State) with the token ready for wasadmin (checks/hosts/token.py),
the WAS page's token configuration at /etc/websphere/pkcs11-ica-token.cfg and the server's key and certificate
generated IN the token by the page's generate-token-key.sh; ``start_server(host)`` starts
checks/standins/was/TokenHttpsServer.java on 9443 with the protocols and suites set-ssl-config-current.py gives
WebSphere and returns the certificate's path (the CA file of a check).
The Java sources stay beside the WAS checks, where the guide names them; they are test scaffolding read
as data, and the states hash them (State.files).
"""

from __future__ import annotations

import ast
import re

from checks.hosts import engine as eng
from checks.hosts.steps import State, snippet_path
from checks.hosts.token import PINS, ready_token, slot_of
from checks.hosts.util import compile_java, copy_to, output
from zrunbook import SNIPPETS
from zrunbook.ihs.distro_paths import library, on_host

PKCS11_CHECK = "checks/standins/was/Pkcs11Check.java"
SERVER = "checks/standins/was/TokenHttpsServer.java"
SSL_NOW = "was/wsadmin/set-ssl-config-current.py"
GENERATE = "was/pkcs11/generate-token-key.sh"
TOKEN_CFG = {"debian13-s390x": "was/pkcs11/ica-token-ubuntu-debian.cfg",
             "debian13-amd64": "was/pkcs11/ica-token-rhel-sles.cfg"}
CONFIG = "/etc/websphere/pkcs11-ica-token.cfg"  # where the WAS page installs the token configuration
AS_WAS = "cd /tmp/verify && runuser -u wasadmin --"
# The PKCS#12 file of the study's way (OpenJDK's keytool wants 6 characters; WebSphere's default WebAS has 5)
KEYSTORE_PASSWORD = "WebAS-p12"
# OpenJDK's keytool and SunPKCS11 in the place of IBM SDK 8's keytool and IBMPKCS11Impl (generate-token-key.sh)
OPENJDK = "KEYTOOL=keytool STORETYPE=PKCS11 PROVIDER_CLASS=sun.security.pkcs11.SunPKCS11"
# keytool's options for the token keystore WITHOUT -providerName: the old stand-in's (and a reader's) mistake
STORE_NO_PROVIDER_NAME = (f"-keystore NONE -storetype PKCS11 -providerClass sun.security.pkcs11.SunPKCS11 "
                          f"-providerArg {CONFIG} -storepass {PINS['TOKEN_USER_PIN']}")

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


def install_token_config(host, rel: str, dest: str) -> str:
    """The page's token configuration file installed at dest, adapted openly to the container: the library it
    names linked to the host's openCryptoki library when missing, and on amd64 (no ICA token) "slot = 1"
    pointed at the soft token's slot. Returns the text installed."""
    text = (SNIPPETS / rel).read_text(encoding="utf-8")
    lib = re.search(r"^library\s*=\s*(\S+)", text, re.M).group(1)
    host.run_expect([0], f"test -e {lib} || {{ mkdir -p $(dirname {lib}) && ln -s {opencryptoki(host)} {lib}; }}")
    text = re.sub(r"^slot = 1$", f"slot = {slot_of(host)}", text, flags=re.M)
    copy_to(host, text, dest)
    host.run_expect([0], f"chmod a+r {dest} && chmod a+rx $(dirname {dest})")
    return text


def make_key(host) -> str:
    """The token ready for wasadmin, the page's token configuration at CONFIG, then the page's
    generate-token-key.sh run as wasadmin (OpenJDK's keytool and SunPKCS11 for IBM's); returns the
    certificate's path."""
    ready_token(host, "wasadmin")
    install_token_config(host, TOKEN_CFG[host.zr_name], CONFIG)
    copy_to(host, (eng.REPO / SERVER).read_text(encoding="utf-8"), "/tmp/verify/TokenHttpsServer.java")
    compile_java(host, "/tmp/verify/TokenHttpsServer.java")
    host.run_expect([0], "chmod -R a+rwX /tmp/verify")
    # Under qemu the ICA token refuses PKCS#1 v1.5 signatures (CKR_FUNCTION_FAILED), so there the token signs
    # the self-signed certificate with RSASSA-PSS, which it does; real Crypto Express does both.
    sigalg = "SIGALG=RSASSA-PSS " if host.zr_name == "debian13-s390x" else ""
    gen = host.run(f"{AS_WAS} env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} {OPENJDK} {sigalg}"
                   f"bash {snippet_path(GENERATE)} was-server localhost /tmp/verify/was-server.pem")
    assert gen.rc == 0, output(gen)
    return "/tmp/verify/was-server.pem"


VERIFY_KEY = State("was-verify-key", make_key, snippets=("crypto", "was/pkcs11"), files=(SERVER,))


def start_server(host, *, position: str = "last", pkcs12: str | None = None, port: int = 9443) -> str:
    """The stand-in server started as wasadmin on a host from VERIFY_KEY, with the protocols and suites
    set-ssl-config-current.py gives WebSphere and the token's provider at ``position`` (last, as the current
    java.security; first, as the study's). With ``pkcs12`` the server key comes from that PKCS#12 file (password
    KEYSTORE_PASSWORD) instead of the token. Returns the certificate's path (the CA file of a check)."""
    extra = f" {pkcs12}" if pkcs12 else ""
    host.run_expect([0],
                    f"{AS_WAS} sh -c 'TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} KEYSTORE_PASSWORD={KEYSTORE_PASSWORD} "
                  f"PROVIDER_POSITION={position} nohup java -cp . TokenHttpsServer {CONFIG} {port} TLSv1.2,TLSv1.3 "
                  f"{','.join(current_suites())}{extra} > server-{port}.log 2>&1 &'")
    up = host.run(f"for i in $(seq 240); do grep -q listening /tmp/verify/server-{port}.log && exit 0; sleep 0.5; "
                  f"done; cat /tmp/verify/server-{port}.log; exit 1")
    assert up.rc == 0, f"the stand-in server did not start: {output(up)}"
    return host.zr_prepared
