"""IBM's GSKit serves the IHS chapter's TLS configuration: the page's httpd.conf fragment, mapped to GSKit attributes
by zrunbook/ihs/gskit_server.py and served by gskserve (a small server on GSKit 8.0.60.5's SSL API from PyPI's
ibm_db wheel) on the amd64 host, with the server key in a key database and, as the page has it, in the openCryptoki
soft token through GSKit's own PKCS #11 layer (libgsk8p11_64).

What is GSKit's own here: the TLS handshakes, the protocol and cipher choices, opening the key database with its
stash (written by GSKit's key management library, libgsk8km_64), finding the certificate by label, logging in to the
token and signing there. What stands in: the key database is a PKCS #12 file made by openssl (the page makes a CMS
.kdb with gskcapicmd, which is not in the wheel; GSKit opens either); the token PIN's stash file is written here in
sslstash's form (IHS's sslstash is not available); the mapping of directives is gskit_server.py's, not mod_ibm_ssl's
(IHS's own defaults and Apache's request handling are not here).
"""

from __future__ import annotations

import re
import shlex

import pytest

from checks.hosts.apache import CA, TOKEN_KEY
from checks.hosts.steps import snippet_path
from checks.hosts.util import output
from zrunbook import SNIPPETS
from zrunbook.db2 import clidriver
from zrunbook.ihs import gskit_server, ihs_lint
from zrunbook.ihs.distro_paths import on_host

CONF = "ihs/httpd/httpd-ssl-current.conf"
DRIVER = "ihs/httpd/pkcs11-driver-ubuntu-debian.conf"
CHECK_KEY = "crypto/verify/check-key-in-token.sh"
CHECK_SIGNS = "crypto/verify/check-token-signs.sh"
ROOT = "/opt/IBM/HTTPServer"
KDB_PW = "zr-kdb-secret"  # test data only
WORK = "/root/zr-gskit"
SERVER = "www.example.com"


def page_conf(host=None) -> str:
    """The page's fragment with the file it includes inlined (the driver path on the host's own triplet)."""
    driver = (SNIPPETS / DRIVER).read_text(encoding="utf-8")
    if host is not None:
        driver = on_host(host, driver)
    return (SNIPPETS / CONF).read_text(encoding="utf-8").replace("Include conf/pkcs11-driver.conf", driver)


def keystore_conf(label: str = "ihscert", *extra: str) -> str:
    """The page's fragment with the server key in the key database instead of the token (no driver, no PIN stash),
    and any extra lines before the closing VirtualHost."""
    text = page_conf()
    text = re.sub(r"(?m)^SSLServerCert .*$", f"SSLServerCert {label}", text)
    text = re.sub(r"(?m)^(SSLStashfile|SSLPKCSDriver) .*\n", "", text)
    return text.replace("</VirtualHost>", "".join(f"    {e}\n" for e in extra) + "</VirtualHost>")


# --- no host: the mapping and the numbers ----------------------------------------------------------------------------


def test_every_attribute_number_is_the_one_gskit_names_in_its_own_library():
    library = clidriver.folder() / "clidriver" / "lib" / "icc" / "libgsk8ssl_64.so"
    named = gskit_server.names_in_library(library)
    assert len(named) > 300, "the library's name table was not found"
    table = {name: number for name, (_kind, number) in gskit_server.ids().items()}
    assert table == {name: named.get(name) for name in table}


def test_the_page_fragment_maps_to_the_token_key_tls_12_and_13_and_its_four_suites():
    got = {s.attribute: s.value for s in gskit_server.attributes(page_conf())}
    assert got["GSK_KEYRING_FILE"] == f"{ROOT}/ssl/key.kdb"
    assert got["GSK_KEYRING_STASH_FILE"] == f"{ROOT}/ssl/key.sth"
    assert got["GSK_KEYRING_LABEL"] == "IBMICATOK:ihscert"
    assert got["GSK_PKCS11_TOKEN_LABEL"] == "IBMICATOK"
    assert got["GSK_PKCS11_TOKEN_PWD"] == f"%{ROOT}/ssl/ibmicatok.sth"
    assert got["GSK_PKCS11_DRIVER_PATH"] == "/usr/lib/s390x-linux-gnu/pkcs11/libopencryptoki.so"
    assert [got[f"GSK_PROTOCOL_{p}"] for p in ("SSLV2", "SSLV3", "TLSV1", "TLSV11", "TLSV12", "TLSV13")] == \
        ["511", "513", "519", "0", "1", "1"]
    assert got["GSK_TLSV12_CIPHER_SPECS_EX"] == \
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
    assert got["GSK_TLSV13_CIPHER_SPECS_EX"] == "TLS_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256"
    assert "GSK_TLSV10_CIPHER_SPECS_EX" not in got
    assert "GSK_TLSV11_CIPHER_SPECS_EX" not in got


def test_short_cipher_names_and_minus_become_gskits_long_name_list():
    conf = "SSLCipherSpec ALL NONE\nSSLCipherSpec TLSv12 +C02F +C030 +9C\nSSLCipherSpec TLSv12 -9C\n"
    got = {s.attribute: s.value for s in gskit_server.attributes(conf)}
    assert got["GSK_TLSV12_CIPHER_SPECS_EX"] == \
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"


# --- on the amd64 host: GSKit serves ----------------------------------------------------------------------------------


def start(host, conf: str, binary: str, *, wait: bool = True):
    """gskserve for conf in the background as root; (True, its first line) once it listens, or (False, what it
    said) when it stopped, as IHS refuses to start."""
    host.run("pkill -x gskserve; rm -f /tmp/gskserve.out /tmp/gskserve.err")
    host.run_expect([0], f"nohup sh -c {shlex.quote(gskit_server.command(conf, binary))} "
                         "> /tmp/gskserve.out 2> /tmp/gskserve.err < /dev/null &")
    for _ in range(100):
        said = host.run("cat /tmp/gskserve.out").stdout
        if said.startswith("ready"):
            return True, said
        if host.run("pgrep -x gskserve").rc != 0:
            return False, said + host.run("cat /tmp/gskserve.err").stdout
        host.run("sleep 0.1")
    raise AssertionError("gskserve neither listened nor stopped in 10 s")


def log(host) -> str:
    return host.run("cat /tmp/gskserve.err").stdout


def handshake(host, *args: str):
    opts = " ".join(shlex.quote(a) for a in args)
    return host.run(f"echo | timeout 30 openssl s_client -connect 127.0.0.1:443 -servername {SERVER} "
                    f"-CAfile {CA}/ca.crt -verify_return_error -brief {opts} 2>&1")


def field(result, name: str) -> str:
    for line in result.stdout.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {name!r} in:\n{result.stdout}")


def lay_out(host, conf: str) -> str:
    """The IHS tree for conf with the chapter's lint module, and the lint's verdict asserted (httpd -t passes)."""
    path = ihs_lint.ihs_root(host, conf, root=ROOT)
    checked = ihs_lint.httpd_t(host, path)
    assert checked.rc == 0, output(checked)
    return path


def key_database(host, binary: str, *, with_server_key: bool, password: str = KDB_PW) -> None:
    """KeyFile's key database at ROOT/ssl/key.kdb, a PKCS #12 file (the stand-in for gskcapicmd's CMS file):
    the test CA as signer and, with_server_key, a server key and certificate labelled ihscert; then its stash,
    written by GSKit (libgsk8km_64) for password."""
    ca = f"{CA}/ca.crt"
    if with_server_key:
        host.run_expect([0], f"mkdir -p {WORK} && openssl req -new -newkey rsa:2048 -nodes -subj /CN={SERVER} "
                             f"-keyout {WORK}/server.key -out {WORK}/server.csr 2>&1")
        host.run_expect([0], f"CA_DIR={CA} bash {snippet_path('ihs/apache/test-ca.sh')} sign {WORK}/server.csr "
                             f"{WORK}/server.crt")
        parts = f"-in {WORK}/server.crt -inkey {WORK}/server.key -certfile {ca} -name ihscert"
    else:
        parts = f"-nokeys -in {ca}"
    host.run_expect([0], f"KDB_PW={shlex.quote(KDB_PW)} openssl pkcs12 -export {parts} -passout env:KDB_PW "
                         f"-out {ROOT}/ssl/key.kdb && rm -f {ROOT}/ssl/key.sth")
    made = host.run(f"GSKSERVE_KEYDB_PW={shlex.quote(password)} {gskit_server.ENV} {binary} --stash {ROOT}/ssl/key.kdb")
    assert made.rc == 0, output(made)
    assert host.file(f"{ROOT}/ssl/key.sth").size > 0


@pytest.fixture(params=["debian13-amd64"], ids=str)  # the wheel is built for x86_64 only
def gskit_host(request, zr_host_pool):
    """The amd64 host from the token state (the token, httpd's user in pkcs11, the test CA), with the wheel's folder
    mounted read-only and gskserve built there; its network namespace recorded for a scanner on this machine."""
    host = zr_host_pool.start(request.param, "-v", f"{clidriver.folder()}:{clidriver.IN_CONTAINER}:ro",
                              state=TOKEN_KEY)
    try:
        pid = zr_host_pool.engine().run("inspect", "-f", "{{.State.Pid}}", host.zr_container).stdout.strip()
        host.zr_port, host.zr_netns = 443, f"/proc/{pid}/ns/net"
        host.zr_gskserve = gskit_server.build(host)
        yield host
    finally:
        host.run("pkill -x gskserve")
        zr_host_pool.remove(host)


@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_serves_the_fragment_from_the_key_database_tls_12_and_13_with_the_pages_suites_only(gskit_host):
    host = gskit_host
    conf = keystore_conf()
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=True)
    started, said = start(host, conf, host.zr_gskserve)
    assert started, said
    tls13 = handshake(host, "-tls1_3")
    assert tls13.rc == 0, output(tls13)
    assert (field(tls13, "Protocol version"), field(tls13, "Ciphersuite")) == ("TLSv1.3", "TLS_AES_256_GCM_SHA384")
    tls12 = handshake(host, "-tls1_2")
    assert tls12.rc == 0, output(tls12)
    assert (field(tls12, "Protocol version"), field(tls12, "Ciphersuite")) == \
        ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384")
    assert handshake(host, "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256").rc == 0
    for refused in (("-tls1_1", "-cipher", "ALL:@SECLEVEL=0"), ("-tls1_2", "-cipher", "AES128-GCM-SHA256"),
                    ("-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256")):
        r = handshake(host, *refused)
        assert r.rc != 0, f"{refused}: {output(r)}"
    page = host.run(f"curl -sS --cacert {CA}/ca.crt --resolve {SERVER}:443:127.0.0.1 https://{SERVER}/")
    assert page.rc == 0, output(page)
    assert "GSKit served this" in page.stdout, output(page)
    said = log(host)
    assert "handshake: 0 protocol=5000 cipher=TLS_AES_256_GCM_SHA384" in said
    assert "handshake: 0 protocol=596 cipher=TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" in said


@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_refuses_to_start_with_a_stash_of_another_password(gskit_host):
    host = gskit_host
    conf = keystore_conf()
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=True, password="not-the-kdb-password")
    started, said = start(host, conf, host.zr_gskserve)
    assert not started
    assert "gsk_environment_init: 408 GSK_ERROR_BAD_KEYFILE_PASSWORD" in said, said


@pytest.mark.snippet(CONF, checker="gskit-server")
def test_a_label_the_key_database_lacks_fails_every_handshake(gskit_host):
    """GSKit opens the key database and looks the label up per connection: every handshake fails with
    GSK_ERROR_BAD_KEYFILE_LABEL and the client gets no certificate."""
    host = gskit_host
    conf = keystore_conf("nosuchcert")
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=True)
    started, said = start(host, conf, host.zr_gskserve)
    assert started, said
    r = handshake(host, "-tls1_2")
    assert r.rc != 0, output(r)
    assert "handshake: 407 GSK_ERROR_BAD_KEYFILE_LABEL" in log(host)


@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_refuses_an_ecdhe_cbc_suite_for_tls_11_that_the_lint_accepts(gskit_host):
    """IHS's cipher table lists TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA for TLS 1.0 to 1.2 and the lint accepts it after
    TLSv11; GSKit 8.0.60.5 refuses it in its TLS 1.1 list (GSK_INVALID_PARAMETER) and the server does not start."""
    host = gskit_host
    conf = keystore_conf("ihscert", "SSLProtocolEnable TLSv11",
                         "SSLCipherSpec TLSv11 +TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA")
    conf = conf.replace("SSLProtocolDisable SSLv2 SSLv3 TLSv10 TLSv11", "SSLProtocolDisable SSLv2 SSLv3 TLSv10")
    lay_out(host, conf)  # the lint passes it
    key_database(host, host.zr_gskserve, with_server_key=True)
    started, said = start(host, conf, host.zr_gskserve)
    assert not started
    assert "gsk_attribute_set 242: 13 GSK_INVALID_PARAMETER" in said, said
