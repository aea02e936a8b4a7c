"""IBM's GSKit serves the IHS chapter's TLS configuration: the page's httpd.conf fragment, mapped to GSKit attributes
by checks/standins/ihs/gskit_server.py and served by gskserve (a small server on GSKit 8.0.60.5's SSL API from PyPI's
ibm_db wheel) on the amd64 host, with the server key in a key database and, as the page has it, in the openCryptoki
soft token through GSKit's own PKCS #11 layer (libgsk8p11_64).

What is GSKit's own here: the TLS handshakes, the protocol and cipher choices, opening the key database with its
stash (written by GSKit's key management library, libgsk8km_64), finding the certificate by label, logging in to the
token and signing there; in the page's form the CMS key database with the CA as signer, created by GSKit's key
management library. What stands in: with the server key in the key database, that file is a PKCS #12 file made by
openssl (gskcapicmd, which the page uses, is not in the wheel; GSKit opens either); the token's key pair comes from
the Apache page's key step and p11sak stores its certificate; the token PIN's stash file is written here in the old
XOR form (IHS's sslstash is not available); the mapping of directives is gskit_server.py's, not mod_ibm_ssl's
(IHS's own defaults and Apache's request handling are not here).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checks.hosts import acme, pin_state
from checks.hosts.apache import CA, TOKEN_KEY, negotiated_group, token_public_key, try_export, unwrapped_public_key
from checks.hosts.steps import snippet_path
from checks.hosts.token import PINS, slot_of, token_env
from checks.hosts.util import TESTSSL_RATING_CHECKS, copy_to, output
from checks.standins.ihs import gskit_server, gskit_verdicts, ihs_lint
from zrunbook import SNIPPETS, clidriver, registry
from zrunbook.ihs import values
from zrunbook.ihs.distro_paths import on_host

CONF = "ihs/httpd/httpd-ssl-current.conf"
DRIVER = "ihs/httpd/pkcs11-driver-ubuntu-debian.conf"
CHECK_KEY = "crypto/verify/check-key-in-token.sh"
CHECK_SIGNS = "crypto/verify/check-token-signs.sh"
ROOT = "/opt/IBM/HTTPServer"
KDB_PW = "zr-kdb-secret"  # test data only
WORK = "/root/zr-gskit"
SERVER = "www.example.com"
BAD_VERDICTS = Path(__file__).resolve().parent / "bad" / "ihs-ciphers-wrong-gskit-verdict.csv"


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


@pytest.mark.uses("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
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


def test_the_badges_name_the_gskit_level_the_wheel_carries_and_say_who_drove_it():
    """db2cli is IBM's own program: ran. IHS's mod_ibm_ssl and the plug-in never ran; the project's harness drove
    their GSKit: the badge says so, with the level."""
    assert registry.evidence("db2cli") == f"ran (GSKit {clidriver.GSKIT})"
    for checker in ("gskit-server", "gskit-client"):
        assert registry.evidence(checker) == f"GSKit {clidriver.GSKIT}, project harness"


def test_short_cipher_names_and_minus_become_gskits_long_name_list():
    conf = "SSLCipherSpec ALL NONE\nSSLCipherSpec TLSv12 +C02F +C030 +9C\nSSLCipherSpec TLSv12 -9C\n"
    got = {s.attribute: s.value for s in gskit_server.attributes(conf)}
    assert got["GSK_TLSV12_CIPHER_SPECS_EX"] == \
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"


# --- on the amd64 host: GSKit serves ----------------------------------------------------------------------------------


def start(host, conf: str, binary: str, *, wait: bool = True):
    """gskserve for conf in the background as root; (True, its first line) once it listens, or (False, what it
    said) when it stopped, as IHS refuses to start."""
    stop(host)
    host.run("rm -f /tmp/gskserve.out /tmp/gskserve.err")
    host.run_expect([0], f"{gskit_server.command(conf, binary)} > /tmp/gskserve.out 2> /tmp/gskserve.err "
                         "< /dev/null & echo $! > /tmp/gskserve.pid")
    for _ in range(100):
        said = host.run("cat /tmp/gskserve.out").stdout
        if said.startswith("ready"):
            return True, said
        if host.run("kill -0 $(cat /tmp/gskserve.pid)").rc != 0:  # stopped: read what it said after it stopped
            return False, host.run("cat /tmp/gskserve.out /tmp/gskserve.err").stdout
        host.run("sleep 0.1")
    raise AssertionError("gskserve neither listened nor stopped in 10 s")


def stop(host) -> None:
    """The gskserve this module started (by its process id), if it still runs."""
    host.run("test -s /tmp/gskserve.pid && kill $(cat /tmp/gskserve.pid); rm -f /tmp/gskserve.pid")


def log(host) -> str:
    return host.run("cat /tmp/gskserve.err").stdout


def handshake(host, *args: str):
    opts = " ".join(shlex.quote(a) for a in args)
    # nothing sent: gskserve answers a request and closes without a close_notify, which OpenSSL 3.5 reports as
    # an error; with no request the client closes first
    return host.run(f"timeout 30 openssl s_client -connect 127.0.0.1:443 -servername {SERVER} "
                    f"-CAfile {CA}/ca.crt -verify_return_error -brief {opts} < /dev/null 2>&1")


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
    """KeyFile's key database at ROOT/ssl/key.kdb and its stash, written by GSKit's key management library
    (libgsk8km_64) for password. Without the server key (the page's form: the key is in the token) it is a new CMS
    key database that GSKit creates, holding the test CA as its signer, as the page's holds your CA. With the
    server key it is a PKCS #12 file that openssl makes from a key and a test-CA certificate labelled ihscert (the
    stand-in for gskcapicmd, which is not in the wheel: importing into the CMS file through libgsk8km_64 did not
    work without its header); GSKit opens either by its content."""
    host.run_expect([0], f"rm -f {ROOT}/ssl/key.kdb {ROOT}/ssl/key.rdb {ROOT}/ssl/key.crl {ROOT}/ssl/key.sth")
    mode = "--stash"
    if with_server_key:
        host.run_expect([0], f"mkdir -p {WORK} && openssl req -new -newkey rsa:2048 -nodes -subj /CN={SERVER} "
                             f"-keyout {WORK}/server.key -out {WORK}/server.csr 2>&1")
        host.run_expect([0], f"CA_DIR={CA} bash {snippet_path('ihs/apache/test-ca.sh')} sign {WORK}/server.csr "
                             f"{WORK}/server.crt")
        host.run_expect([0], f"KDB_PW={shlex.quote(KDB_PW)} openssl pkcs12 -export -in {WORK}/server.crt "
                             f"-inkey {WORK}/server.key -certfile {CA}/ca.crt -name ihscert -passout env:KDB_PW "
                             f"-out {ROOT}/ssl/key.kdb")
    else:  # the test CA as the signer GSKit validates the token's certificate with
        host.run_expect([0], f"mkdir -p {WORK} && openssl x509 -in {CA}/ca.crt -outform DER -out {WORK}/ca.der")
        mode = f"--create-kdb {ROOT}/ssl/key.kdb {WORK}/ca.der"
    if mode == "--stash":
        mode = f"--stash {ROOT}/ssl/key.kdb"
    made = host.run(f"GSKSERVE_KEYDB_PW={shlex.quote(password)} {gskit_server.ENV} {binary} {mode}")
    assert made.rc == 0, output(made)
    assert host.file(f"{ROOT}/ssl/key.sth").size > 0
    if not with_server_key:  # a CMS file: GSKit's magic and record type, and its request and CRL files
        assert host.run(f"head -c 16 {ROOT}/ssl/key.kdb | grep -q X509KEY").rc == 0
        assert host.file(f"{ROOT}/ssl/key.rdb").exists


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
        stop(host)
        zr_host_pool.remove(host)


@pytest.mark.uses("ihs/apache/test-ca.sh", "ihs/httpd/pkcs11-driver-rhel-sles.conf",
                  "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
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


@pytest.mark.uses("ihs/apache/test-ca.sh", "ihs/httpd/pkcs11-driver-rhel-sles.conf",
                  "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_alone_starts_with_tls_12_and_13_off_so_the_mapping_names_every_protocol(gskit_host):
    """Why gskit_server.py sets every protocol: GSKit 8.0.60.5 with no protocol attribute serves TLS 1.1 and
    refuses TLS 1.2 and 1.3 (IHS's own defaults differ; the page says so)."""
    host = gskit_host
    conf = keystore_conf()
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=True)
    bare = "\n".join(line for line in conf.splitlines()
                     if not line.strip().startswith(("SSLProtocolDisable", "SSLCipherSpec")))
    assert not [s for s in gskit_server.attributes(bare) if s.directive.startswith("SSLProtocol")]
    keys = [s for s in gskit_server.attributes(bare) if s.attribute.startswith("GSK_KEYRING")]
    table = gskit_server.ids()
    stop(host)
    host.run_expect([0], f"{gskit_server.ENV} {host.zr_gskserve} 443 "
                         f"{' '.join(shlex.quote(k.arg(table)) for k in keys)} > /tmp/gskserve.out "
                         "2> /tmp/gskserve.err < /dev/null & echo $! > /tmp/gskserve.pid")
    host.run("for i in $(seq 50); do grep -q ready /tmp/gskserve.out && break; sleep 0.1; done")
    assert handshake(host, "-tls1_2").rc != 0
    assert handshake(host, "-tls1_3").rc != 0
    old = handshake(host, "-tls1_1", "-cipher", "ALL:@SECLEVEL=0")
    assert old.rc == 0, output(old)
    assert field(old, "Protocol version") == "TLSv1.1"


@pytest.mark.negative("ihs/httpd/httpd-ssl-current.conf",
                      expects="GSKit does not start: gsk_environment_init: 408 GSK_ERROR_BAD_KEYFILE_PASSWORD")
@pytest.mark.uses("ihs/apache/test-ca.sh", "ihs/httpd/pkcs11-driver-rhel-sles.conf",
                  "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_refuses_to_start_with_a_stash_of_another_password(gskit_host):
    host = gskit_host
    conf = keystore_conf()
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=True, password="not-the-kdb-password")
    started, said = start(host, conf, host.zr_gskserve)
    assert not started
    assert "gsk_environment_init: 408 GSK_ERROR_BAD_KEYFILE_PASSWORD" in said, said


@pytest.mark.negative("ihs/httpd/httpd-ssl-current.conf",
                      expects="every handshake fails: 407 GSK_ERROR_BAD_KEYFILE_LABEL")
@pytest.mark.uses("ihs/apache/test-ca.sh", "ihs/httpd/pkcs11-driver-rhel-sles.conf",
                  "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
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


@pytest.mark.negative("ihs/httpd/httpd-ssl-current.conf",
                      expects="with an ECDHE CBC suite for TLS 1.1 GSKit does not start (13 GSK_INVALID_PARAMETER); "
                              "the lint warns naming the harness")
@pytest.mark.uses("ihs/apache/test-ca.sh", "ihs/httpd/pkcs11-driver-rhel-sles.conf",
                  "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_refuses_an_ecdhe_cbc_suite_for_tls_11_and_the_lint_warns_naming_the_harness(gskit_host):
    """IHS's cipher table lists TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA for TLS 1.0 to 1.2; GSKit 8.0.60.5 under the
    harness refuses it in its TLS 1.1 list (GSK_INVALID_PARAMETER) and the server does not start. IHS itself never
    ran, so the lint, reading that verdict from the table's gskit_8_0_60 column, passes the line with a warning that
    names the harness instead of rejecting it."""
    host = gskit_host
    conf = keystore_conf("ihscert", "SSLProtocolEnable TLSv11",
                         "SSLCipherSpec TLSv11 +TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA")
    conf = conf.replace("SSLProtocolDisable SSLv2 SSLv3 TLSv10 TLSv11", "SSLProtocolDisable SSLv2 SSLv3 TLSv10")
    linted = ihs_lint.httpd_t(host, ihs_lint.ihs_root(host, conf, root=ROOT))
    assert linted.rc == 0, output(linted)
    assert f"but GSKit {clidriver.GSKIT} under the project's harness (checks/standins/ihs/gskit_server.py) " \
           "refused it (13 GSK_INVALID_PARAMETER" in linted.stderr, output(linted)
    key_database(host, host.zr_gskserve, with_server_key=True)
    started, said = start(host, conf, host.zr_gskserve)
    assert not started
    assert "gsk_attribute_set 242: 13 GSK_INVALID_PARAMETER" in said, said


# --- the key in the token, as the page has it ------------------------------------------------------------------------


def token_certificate(host) -> str:
    """The page's token key and certificate (IBMICATOK:ihscert) for GSKit: gskcapicmd is not in the wheel, so the key
    pair is generated in the token by the Apache page's key step (KEY_LABEL=ihscert: sign-only, sensitive, never
    extractable, its label's bytes as CKA_ID), the test CA signs its request, and p11sak stores the certificate in
    the token under the same label and CKA_ID (gskcapicmd -cert -create -crypto would make both). Returns the
    slot."""
    host.run_expect([0], f"mkdir -p {WORK}")
    made = host.run(f"{token_env()} KEY_LABEL=ihscert CSR={WORK}/ihs.csr "
                    f"bash {snippet_path('ihs/apache/create-token-key-and-csr.sh')}")
    assert made.rc == 0, output(made)
    host.run_expect([0], f"CA_DIR={CA} bash {snippet_path('ihs/apache/test-ca.sh')} sign {WORK}/ihs.csr "
                         f"{WORK}/ihs.crt")
    slot = slot_of(host)
    key_id = b"ihscert".hex()
    stored = host.run(f"PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} p11sak import-cert x509 --slot {slot} "
                      f"--label ihscert --id {key_id} --file {WORK}/ihs.crt")
    assert stored.rc == 0, output(stored)
    return slot


def token_pin_stash(host, pin: str) -> None:
    """SSLStashfile's file with the token's PIN (the stand-in for sslstash: gskit_server.sslstash_form)."""
    copy_to(host, gskit_server.sslstash_form(pin), f"{ROOT}/ssl/ibmicatok.sth")
    host.run_expect([0], f"chmod 0600 {ROOT}/ssl/ibmicatok.sth")


def serve_token(host, pin: str = PINS["TOKEN_USER_PIN"]):
    """The page's fragment as it is (driver on the host's triplet), the key in the token; gskserve started."""
    slot = token_certificate(host)
    conf = page_conf(host)
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=False)
    token_pin_stash(host, pin)
    started, said = start(host, conf, host.zr_gskserve)
    return slot, started, said


def check_key_in_token(host, slot: str):
    env = f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot} SERVER_NAME={SERVER}"
    return host.run(f"runuser -u www-data -- env {env} bash {snippet_path(CHECK_KEY)} localhost:443")


def check_token_signs(host, slot: str):
    env = f"SERVICE_USER=root SLOT={slot} CA_FILE={CA}/ca.crt SERVER_NAME={SERVER}"
    return host.run(f"env {env} bash {snippet_path(CHECK_SIGNS)} localhost:443 3")


@pytest.mark.uses("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/test-ca.sh",
                  "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(CONF, DRIVER, CHECK_KEY, CHECK_SIGNS, checker="gskit-server")
def test_gskit_serves_the_page_fragment_with_the_key_in_the_token_and_both_outcome_checks_pass(gskit_host):
    host = gskit_host
    slot, started, said = serve_token(host)
    assert started, said
    tls13 = handshake(host, "-tls1_3")
    assert tls13.rc == 0, output(tls13) + log(host)
    assert field(tls13, "Ciphersuite") == "TLS_AES_256_GCM_SHA384"
    tls12 = handshake(host, "-tls1_2")
    assert tls12.rc == 0, output(tls12)
    assert field(tls12, "Ciphersuite") == "ECDHE-RSA-AES256-GCM-SHA384"
    served = host.run(f"openssl x509 -in {WORK}/ihs.crt -noout -pubkey").stdout
    token_key = host.run("OPENSSL_CONF=/etc/ssl/openssl-pkcs11.conf openssl pkey -pubin -pubout "
                         "-in 'pkcs11:token=IBMICATOK;object=ihscert;type=public'").stdout
    assert "BEGIN PUBLIC KEY" in served
    assert served == token_key
    key = check_key_in_token(host, slot)
    assert key.rc == 0, output(key)
    signs = check_token_signs(host, slot)
    assert signs.rc == 0, output(signs)
    print(key.stdout, signs.stdout)


@pytest.mark.uses("ihs/apache/test-ca.sh", "ihs/httpd/pkcs11-driver-rhel-sles.conf",
                  "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.negative("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                      expects="both checks fail when GSKit serves the key from the key database")
@pytest.mark.snippet(CONF, CHECK_KEY, CHECK_SIGNS, checker="gskit-server")
def test_both_outcome_checks_fail_when_gskit_serves_the_key_from_the_key_database(gskit_host):
    """Negative case: the same certificate name served with a key in the key database: the token has no key for the
    served certificate and signs nothing."""
    host = gskit_host
    slot = slot_of(host)
    conf = keystore_conf()
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=True)
    started, said = start(host, conf, host.zr_gskserve)
    assert started, said
    key = check_key_in_token(host, slot)
    assert key.rc == 1, output(key)
    assert "no private key in slot" in key.stderr
    signs = check_token_signs(host, slot)
    assert signs.rc == 1, output(signs)
    assert "signed outside the token" in signs.stderr


@pytest.mark.negative("ihs/httpd/httpd-ssl-current.conf",
                      expects="GSKit does not start: 432 GSK_ERROR_PKCS11_TOKEN_BADPASSWORD")
@pytest.mark.uses("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/test-ca.sh",
                  "ihs/httpd/pkcs11-driver-rhel-sles.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_does_not_serve_with_a_wrong_token_pin_in_the_stash(gskit_host):
    host = gskit_host
    _slot, started, said = serve_token(host, pin="86427531")
    if started:  # what it does then, for the message
        said += output(handshake(host, "-tls1_2")) + log(host)
    assert not started, said  # GSKit logs in to the token in gsk_environment_init: IHS would not start either
    assert "gsk_environment_init: 432 GSK_ERROR_PKCS11_TOKEN_BADPASSWORD" in said, said


# --- GSKit makes the key in the token (issue 44, item 1) ----------------------------------------------------------

TEST_CA = "ihs/apache/test-ca.sh"


def gskit_token_certificate(host, label: str = "ihscert") -> str:
    """The page's step 2 the way the study did it, by GSKit: its key management library (gskserve --token-request and
    --token-receive, the functions behind gskcapicmd -certreq -create -crypto and -cert -receive -crypto) opens the
    page's token with the token PIN, generates the key pair there with a SHA-256 request for CN=www.example.com,
    the test CA signs the request, and GSKit receives the certificate into the token under the same label. Returns
    the slot."""
    driver = {s.attribute: s.value for s in gskit_server.attributes(page_conf(host))}["GSK_PKCS11_DRIVER_PATH"]
    km = f"GSKSERVE_TOKEN_PIN={PINS['TOKEN_USER_PIN']} {gskit_server.ENV} {host.zr_gskserve}"
    host.run_expect([0], f"mkdir -p {WORK}")
    made = host.run(f"{km} --token-request {driver} IBMICATOK {label} {SERVER} {WORK}/{label}.csr")
    assert made.rc == 0, output(made)
    request = host.run(f"openssl req -in {WORK}/{label}.csr -noout -verify -subject -text")
    assert request.rc == 0, output(request)
    assert f"subject=CN={SERVER}" in request.stdout, request.stdout
    assert "Signature Algorithm: sha256WithRSAEncryption" in request.stdout, request.stdout
    assert "Public-Key: (2048 bit)" in request.stdout, request.stdout
    host.run_expect([0], f"CA_DIR={CA} bash {snippet_path(TEST_CA)} sign {WORK}/{label}.csr {WORK}/{label}.crt && "
                         f"openssl x509 -in {WORK}/{label}.crt -outform DER -out {WORK}/{label}.der")
    received = host.run(f"{km} --token-receive {driver} IBMICATOK {WORK}/{label}.der")
    assert received.rc == 0, output(received)
    listed = host.run(f"{km} --token-labels {driver} IBMICATOK")
    assert f"label {label}" in listed.stdout.splitlines(), output(listed)
    return slot_of(host)


def private_key_attributes(host, slot: str, label: str = "ihscert") -> dict[str, bool]:
    """The boolean CKA_* attributes of the token's private key label, as p11sak (openCryptoki's tool) reads them."""
    listed = host.run(f"PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} p11sak list-key private --slot {slot} --long "
                      f"--label {label}")
    assert listed.rc == 0, output(listed)
    found = dict(re.findall(r"^\s+(CKA_[A-Z_]+): (CK_TRUE|CK_FALSE)$", listed.stdout, re.M))
    return {name: found.get(name) == "CK_TRUE" for name in values.GSKIT_TOKEN_KEY_ATTRIBUTES if name in found}


def serve_gskit_key(host) -> str:
    """The page's fragment as it is, served by gskserve with the key GSKit made in the token; the slot."""
    slot = gskit_token_certificate(host)
    conf = page_conf(host)
    lay_out(host, conf)
    key_database(host, host.zr_gskserve, with_server_key=False)
    token_pin_stash(host, PINS["TOKEN_USER_PIN"])
    started, said = start(host, conf, host.zr_gskserve)
    assert started, said
    return slot


EXTRACTABLE = "CKA_EXTRACTABLE is true: the key can be wrapped out of the token"
ONCE_EXTRACTABLE = "CKA_NEVER_EXTRACTABLE is false: the key was extractable once"


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.negative("crypto/verify/check-key-in-token.sh",
                      expects="the key-in-token check fails on a key GSKit generated in the token: "
                              "CKA_EXTRACTABLE true and CKA_NEVER_EXTRACTABLE false")
@pytest.mark.uses(TEST_CA)
@pytest.mark.snippet(CONF, DRIVER, CHECK_KEY, CHECK_SIGNS, checker="gskit-server")
def test_gskit_makes_the_key_in_the_token_serves_the_fragment_and_the_key_check_finds_it_extractable(gskit_host):
    """Issue 44, item 1: GSKit's key management library makes the page's key in the token, with its request; the
    page's unchanged fragment serves the certificate the test CA signed, and the token signs each handshake (the
    signing check passes). The key-in-token check fails, and must: the key GSKit generated is sensitive but
    extractable (values.GSKIT_TOKEN_KEY_ATTRIBUTES, which the key page quotes), so it does not meet the page's
    promise that the key never leaves the token."""
    host = gskit_host
    slot = serve_gskit_key(host)
    tls13 = handshake(host, "-tls1_3")
    assert tls13.rc == 0, output(tls13) + log(host)
    assert field(tls13, "Ciphersuite") == "TLS_AES_256_GCM_SHA384"
    tls12 = handshake(host, "-tls1_2")
    assert tls12.rc == 0, output(tls12)
    served = host.run(f"openssl x509 -in {WORK}/ihscert.crt -noout -pubkey").stdout
    assert "BEGIN PUBLIC KEY" in served
    assert served == token_public_key(host, "ihscert")
    signs = check_token_signs(host, slot)
    assert signs.rc == 0, output(signs)
    attributes = private_key_attributes(host, slot)
    print("GSKit-made token key:", attributes)
    assert attributes == values.GSKIT_TOKEN_KEY_ATTRIBUTES
    key = check_key_in_token(host, slot)
    assert key.rc == 1, output(key)
    assert EXTRACTABLE in key.stderr, output(key)
    assert ONCE_EXTRACTABLE in key.stderr, output(key)


SIGN_ONLY = "ihs/token/make-token-key-sign-only.sh"


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.uses(TEST_CA)
@pytest.mark.negative(
    "ihs/token/make-token-key-sign-only.sh",
    expects="before the step GSKit's key is wrapped out of the token (CKR_OK)")
@pytest.mark.snippet(SIGN_ONLY, checker="testinfra")
@pytest.mark.snippet(CONF, DRIVER, CHECK_KEY, CHECK_SIGNS, checker="gskit-server")
def test_the_gskit_made_key_is_wrapped_out_of_the_token_until_its_extractable_attribute_is_cleared(gskit_host):
    """What CKA_EXTRACTABLE true means for the GSKit-made key: with only what an httpd worker has (the PIN and the
    pkcs11 group), a session AES key made in the token wraps the private key out, and the blob decrypted outside the
    token is the served key. p11sak set-key-attr --new-attr xdu (CKA_EXTRACTABLE false, which PKCS #11 lets a key
    take and never give back, and CKA_DECRYPT and CKA_UNWRAP false: sign-only, as the Apache page's key), the page's
    step make-token-key-sign-only.sh, stops that (a second run says so and changes nothing);
    GSKit still serves TLS 1.2 and 1.3 and the token still signs; CKA_NEVER_EXTRACTABLE stays false, so the
    key-in-token check still fails, on that line only."""
    host = gskit_host
    slot = serve_gskit_key(host)
    tried = try_export(host, "ihscert")
    assert tried["wrap"] == "CKR_OK", tried
    assert unwrapped_public_key(host, tried) == token_public_key(host, "ihscert")
    cleared = host.run(f"{token_env()} bash {snippet_path(SIGN_ONLY)}")  # the page's step: TOKEN_USER_PIN only
    assert cleared.rc == 0, output(cleared)
    assert "ihscert in token IBMICATOK now only signs" in cleared.stdout, output(cleared)
    twice = host.run(f"{token_env()} bash {snippet_path(SIGN_ONLY)}")
    assert (twice.rc, twice.stdout.strip()) == (0, "The key ihscert in token IBMICATOK is not extractable already."), \
        output(twice)
    again = try_export(host, "ihscert")
    assert again["wrap"] == "CKR_KEY_UNEXTRACTABLE", again
    assert again["set_extractable"] != "CKR_OK", again
    attributes = private_key_attributes(host, slot)
    assert attributes == values.GSKIT_TOKEN_KEY_ATTRIBUTES | dict.fromkeys(
        ("CKA_EXTRACTABLE", "CKA_DECRYPT", "CKA_UNWRAP"), False)
    for protocol in ("-tls1_3", "-tls1_2"):
        served = handshake(host, protocol)
        assert served.rc == 0, output(served) + log(host)
    signs = check_token_signs(host, slot)
    assert signs.rc == 0, output(signs)
    key = check_key_in_token(host, slot)
    assert key.rc == 1, output(key)
    assert EXTRACTABLE not in key.stderr, output(key)
    assert ONCE_EXTRACTABLE in key.stderr, output(key)


# --- renewal with GSKit (issue 44, item 5, first half) ---------------------------------------------------------------


def gskit_km(host, *args: str):
    """gskserve's --token-* mode on the page's token (GSKit's key management library), with the token PIN."""
    driver = {s.attribute: s.value for s in gskit_server.attributes(page_conf(host))}["GSK_PKCS11_DRIVER_PATH"]
    return host.run(f"GSKSERVE_TOKEN_PIN={PINS['TOKEN_USER_PIN']} {gskit_server.ENV} {host.zr_gskserve} "
                    f"{args[0]} {driver} IBMICATOK {' '.join(shlex.quote(a) for a in args[1:])}")


def served_fingerprint(host) -> str:
    """The SHA-256 fingerprint of the certificate the server on port 443 presents."""
    return host.check_output(f"openssl s_client -connect 127.0.0.1:443 -servername {SERVER} < /dev/null 2>/dev/null"
                             " | openssl x509 -noout -fingerprint -sha256")


def switched_conf(host, label: str) -> str:
    """The page's fragment with SSLServerCert naming the token's certificate label: the one line a renewal changes."""
    conf = page_conf(host)
    switched = re.sub(r"(?m)^(\s*SSLServerCert\s+IBMICATOK:)\S+", rf"\g<1>{label}", conf)
    assert switched != conf or label == "ihscert"
    return switched


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.uses(TEST_CA)
@pytest.mark.snippet(CONF, DRIVER, CHECK_SIGNS, checker="gskit-server")
def test_gskit_renews_the_token_certificate_switches_sslservercert_and_removes_the_old_key(gskit_host):
    """A renewal the way IHS's tools would do it, run with GSKit's key management library on the amd64 host: while
    the page's fragment serves the GSKit-made key ihscert, GSKit makes a new key in the token with its request
    (ihscert-next), the CA signs it and GSKit receives the reply; the server keeps serving the old certificate until
    SSLServerCert names the new label and it starts again; then GSKit deletes the old certificate and its key pair
    (GSKKM_DeleteKey, gskcapicmd -cert -delete's function), the token holds no object labelled ihscert, and the new
    certificate still serves with the token signing."""
    host = gskit_host
    slot = serve_gskit_key(host)
    old = served_fingerprint(host)
    gskit_token_certificate(host, "ihscert-next")
    assert served_fingerprint(host) == old  # the new key and certificate change nothing until the switch
    conf = switched_conf(host, "ihscert-next")
    lay_out(host, conf)
    started, said = start(host, conf, host.zr_gskserve)
    assert started, said
    new = served_fingerprint(host)
    assert new != old
    assert new == host.check_output(f"openssl x509 -in {WORK}/ihscert-next.crt -noout -fingerprint -sha256")
    deleted = gskit_km(host, "--token-delete", "ihscert")
    assert deleted.rc == 0, output(deleted)
    listed = gskit_km(host, "--token-labels")
    assert listed.stdout.splitlines() == ["label ihscert-next"], output(listed)
    left = host.run(f"PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} p11sak list-key all --slot {slot} --label ihscert")
    assert left.rc == 0, output(left)
    assert '"ihscert"' not in left.stdout, output(left)
    assert handshake(host, "-tls1_3").rc == 0, log(host)
    assert served_fingerprint(host) == new
    signs = check_token_signs(host, slot)
    assert signs.rc == 0, output(signs)


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.negative("ihs/httpd/httpd-ssl-current.conf",
                      expects="the unswitched fragment serves no handshake once GSKit removed the old certificate")
@pytest.mark.uses(TEST_CA)
@pytest.mark.snippet(CONF, DRIVER, checker="gskit-server")
def test_gskit_fails_every_handshake_when_the_old_key_is_removed_before_sslservercert_is_switched(gskit_host):
    """Negative case for the renewal's order: GSKit deletes the served certificate before SSLServerCert names the new
    one: the server started with the unswitched fragment starts (it logs in to the token) and then fails every
    handshake with GSK_ERROR_BAD_KEYFILE_LABEL (GSKit looks the label up per connection, as with a label the key
    database lacks)."""
    host = gskit_host
    serve_gskit_key(host)
    gskit_token_certificate(host, "ihscert-next")
    deleted = gskit_km(host, "--token-delete", "ihscert")
    assert deleted.rc == 0, output(deleted)
    conf = page_conf(host)
    lay_out(host, conf)
    started, said = start(host, conf, host.zr_gskserve)
    assert started, said  # it starts: the token and its PIN are fine
    r = handshake(host, "-tls1_2")
    assert r.rc != 0, output(r)
    assert "handshake: 407 GSK_ERROR_BAD_KEYFILE_LABEL" in log(host), log(host)


# --- two scanners against GSKit serving the page's fragment ---------------------------------------------------------


@pytest.mark.uses("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/test-ca.sh",
                  "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(CONF, DRIVER, checker="gskit-server")
def test_testssl_finds_only_tls_12_and_13_from_gskit_serving_the_page_fragment(gskit_host):
    host = gskit_host
    _slot, started, said = serve_token(host)
    assert started, said
    run = host.run(f"testssl {TESTSSL_RATING_CHECKS} --quiet --color 0 --warnings off --add-ca {CA}/ca.crt "
                   f"--ip 127.0.0.1 --jsonfile /tmp/testssl.json https://{SERVER}/")
    assert host.file("/tmp/testssl.json").exists, run.stdout[-3000:] + run.stderr
    found = {f["id"]: f["finding"] for f in json.loads(host.file("/tmp/testssl.json").content_string)}
    print({k: v for k, v in found.items() if k.startswith(("SSLv", "TLS1", "overall", "grade", "cipher_order",
                                                              "FS", "cipherlist", "supported_groups"))})
    assert [found.get(p) for p in ("SSLv2", "SSLv3", "TLS1", "TLS1_1")] == ["not offered"] * 4
    assert found.get("TLS1_2") == "offered"
    assert found.get("TLS1_3", "").startswith("offered")
    caps = sorted(v for k, v in found.items() if k.startswith("grade_cap_reason"))
    assert (found.get("overall_grade"), caps) == ("A", ["Grade capped to A. HSTS is not offered"]), caps


def sslyze(host, tmp_path: Path):
    """sslyze from this machine in the container's network namespace, against Mozilla's intermediate profile."""
    exe = Path(sys.executable).with_name("sslyze")
    if not exe.exists():
        pytest.fail(f"sslyze is not installed next to {sys.executable}: pip install 'sslyze>=6.3,<7'", pytrace=False)
    if not shutil.which("nsenter"):
        pytest.fail("nsenter is not installed: apt-get install util-linux", pytrace=False)
    ca = tmp_path / "ca.crt"
    ca.write_text(host.file(f"{CA}/ca.crt").content_string)
    out = tmp_path / "scan.json"
    proc = subprocess.run(["nsenter", f"--net={host.zr_netns}", str(exe), "--mozilla_config=intermediate",
                           f"--certinfo_ca_file={ca}", f"--json_out={out}", f"{SERVER}:443{{127.0.0.1}}"],
                          capture_output=True, text=True, timeout=300)
    return proc, json.loads(out.read_text()) if out.exists() else None


@pytest.mark.uses("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/test-ca.sh",
                  "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(CONF, DRIVER, checker="gskit-server")
def test_sslyze_finds_the_pages_suites_and_gskits_own_curves_outside_mozilla_intermediate(gskit_host, tmp_path):
    """The protocols and suites are the file's. What the file does not set is GSKit's: it accepts X448 and secp521r1
    for ECDHE, which Mozilla's intermediate profile leaves out (sslyze: not compliant), and it honours renegotiation
    started by the client. Both are measured facts about GSKit 8.0.60.5 with this file, not about IHS, whose
    defaults could not be checked."""
    host = gskit_host
    _slot, started, said = serve_token(host)
    assert started, said
    proc, scan = sslyze(host, tmp_path)
    assert scan is not None, proc.stdout + proc.stderr
    print(proc.stdout[-4000:])
    result = scan["server_scan_results"][0]["scan_result"]
    accepted = {name: sorted(c["cipher_suite"]["name"] for c in result[name]["result"]["accepted_cipher_suites"])
                for name in ("ssl_2_0_cipher_suites", "ssl_3_0_cipher_suites", "tls_1_0_cipher_suites",
                             "tls_1_1_cipher_suites", "tls_1_2_cipher_suites", "tls_1_3_cipher_suites")}
    assert accepted == {
        "ssl_2_0_cipher_suites": [], "ssl_3_0_cipher_suites": [], "tls_1_0_cipher_suites": [],
        "tls_1_1_cipher_suites": [],
        "tls_1_2_cipher_suites": ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"],
        "tls_1_3_cipher_suites": ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"]}
    curves = {c["name"] for c in result["elliptic_curves"]["result"]["supported_curves"]}
    assert curves == {"X25519", "X448", "secp256r1", "secp384r1", "secp521r1"}, curves
    assert proc.returncode != 0
    assert "FAILED - Not compliant." in proc.stdout
    verdict = next(line for line in proc.stdout.splitlines() if "tls_curves:" in line)
    assert "'X448'" in verdict, verdict
    assert "'secp521r1'" in verdict, verdict
    assert result["session_renegotiation"]["result"]["is_vulnerable_to_client_renegotiation_dos"] is True



# --- GSKit judges the facts tables' names ------------------------------------------------------------------------


@pytest.mark.uses("ihs/apache/test-ca.sh")
@pytest.mark.snippet(CONF, checker="gskit-server")
def test_gskit_judges_every_protocol_and_cipher_the_ihs_and_db2_tables_list_as_they_record(gskit_host):
    """Every (protocol, cipher) in facts/ihs/ihs-ciphers.csv and ihs-protocols.csv and every SSL_CIPHERSPECS and
    SSL_VERSIONS name in facts/db2/clp-keywords.csv, served alone by GSKit and offered alone by openssl s_client
    (checks/standins/ihs/gskit_verdicts.py): today's verdicts are the ones the tables' gskit_8_0_60 column records. The
    negative case, checks/ihs/bad/ihs-ciphers-wrong-gskit-verdict.csv, records "negotiated" where GSKit refuses."""
    host = gskit_host
    cases = gskit_verdicts.ihs_cases() + gskit_verdicts.db2_cases()
    found = gskit_verdicts.judge(host, host.zr_gskserve, snippet_path("ihs/apache/test-ca.sh"), cases, KDB_PW)
    counts = {}
    for v in found.values():
        kind = "refused" if gskit_verdicts.refused(v) else v.split(" (")[0]
        counts[kind] = counts.get(kind, 0) + 1
    print(f"{len(found)} cases: {counts}")
    assert gskit_verdicts.mismatches(found, gskit_verdicts.recorded()) == []
    bad = {k: v for k, v in gskit_verdicts.recorded(ciphers=BAD_VERDICTS).items() if k[0] == "ihs-ciphers"}
    assert gskit_verdicts.mismatches({k: found[k] for k in bad}, bad) == [
        "ihs-ciphers TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA on TLSv11: the table records 'negotiated', "
        "GSKit says '13 GSK_INVALID_PARAMETER'"]


# --- GSKit and post-quantum key exchange (issue 44, item 4) -----------------------------------------------------------

# The groups Debian 13's OpenSSL 3.5 offers in TLS 1.3 beyond the classical ones: the hybrids and pure ML-KEM.
ML_KEM_GROUPS = ("X25519MLKEM768", "SecP256r1MLKEM768", "SecP384r1MLKEM1024", "MLKEM512", "MLKEM768", "MLKEM1024")


@pytest.mark.uses("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/test-ca.sh",
                  "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(CONF, DRIVER, checker="gskit-server")
def test_gskit_serving_the_page_fragment_negotiates_no_ml_kem_group_and_falls_back_to_x25519(gskit_host):
    """What GSKit 8.0.60.5 does when a client offers post-quantum key exchange, measured: OpenSSL 3.5's s_client
    offers each ML-KEM group alone over TLS 1.3 to gskserve serving the page's fragment with the key in the token.
    The negotiated group of each attempt is recorded (printed; the post-quantum page's GSKit row states it). Then the
    usual client offer, X25519MLKEM768 first and X25519 after it, as OpenSSL's default list has them: the handshake
    must complete, on a classical group, so a GSKit front end stays reachable by post-quantum clients, without
    post-quantum protection."""
    host = gskit_host
    _slot, started, said = serve_token(host)
    assert started, said
    found = {}
    for group in ML_KEM_GROUPS:
        r = handshake(host, "-tls1_3", "-groups", group)
        found[group] = negotiated_group(r.stdout) if r.rc == 0 else "refused"
    print("GSKit 8.0.60.5 with one ML-KEM group offered:", found)
    assert found == dict.fromkeys(ML_KEM_GROUPS, "refused"), found
    both = handshake(host, "-tls1_3", "-groups", "X25519MLKEM768:X25519")
    assert both.rc == 0, output(both) + log(host)
    assert negotiated_group(both.stdout) == "X25519", output(both)
    # The same client offer against Apache with OpenSSL 3.5 negotiates X25519MLKEM768 (checks/ihs/test_apache_pq.py):
    # the fallback here is GSKit's answer, not the client's.



# --- a stale PIN stash (issue 44, item 5) -----------------------------------------------------------------------------


def start_with_stash(host, conf: str, pin: str):
    """gskserve started with SSLStashfile holding pin; (started, what it said, the token's failed-login bits)."""
    token_pin_stash(host, pin)
    started, said = start(host, conf, host.zr_gskserve)
    return started, said, pin_state.flags(host) & pin_state.FAILED


@pytest.mark.negative("ihs/httpd/httpd-ssl-current.conf",
                      expects="each start with a stale PIN stash fails with one failed login, and the third locks the "
                              "user PIN")
@pytest.mark.uses("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/test-ca.sh",
                  "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(CONF, DRIVER, checker="gskit-server")
def test_each_gskit_start_with_a_stale_pin_stash_is_one_failed_login_and_the_third_locks_the_token(gskit_host):
    """The PIN changed and the stash not rewritten: GSKit's environment init logs in once per start with the stash's
    PIN, so each start costs one failed login (the token's flags after each start are
    values.STALE_STASH_FLAGS); the stash rewritten with the new PIN serves and its login clears the count. After the
    third stale start the user PIN is locked, and then the right PIN in the stash fails with the same GSKit error as
    a wrong one, until the security officer sets the user PIN (pkcsconf -u) and the stash is rewritten: then GSKit
    serves and the flags are clean (the troubleshooting page's way out)."""
    host = gskit_host
    slot, started, said = serve_token(host)
    assert started, said
    assert pin_state.flags(host) & pin_state.FAILED == 0
    stop(host)
    changed = host.run(f"printf '%s\\n%s\\n%s\\n' {pin_state.OLD} {pin_state.NEW} {pin_state.NEW} "
                       f"| pkcsconf -c {slot} -p")
    assert changed.rc == 0, output(changed)
    conf = page_conf(host)
    named = {pin_state.COUNT_LOW: "USER_PIN_COUNT_LOW", pin_state.FINAL_TRY: "USER_PIN_FINAL_TRY",
             pin_state.LOCKED: "USER_PIN_LOCKED"}

    started, said, failed = start_with_stash(host, conf, pin_state.OLD)  # the stale stash
    assert not started, said
    assert values.STALE_STASH_ERROR in said, said
    assert named.get(failed) == values.STALE_STASH_FLAGS[0], hex(failed)
    started, said, failed = start_with_stash(host, conf, pin_state.NEW)  # the stash step run again
    assert started, said
    assert failed == 0, hex(failed)  # the good login cleared the count
    stop(host)

    seen = []
    for _ in values.STALE_STASH_FLAGS:
        started, said, failed = start_with_stash(host, conf, pin_state.OLD)
        assert not started, said
        assert values.STALE_STASH_ERROR in said, said
        seen.append(named.get(failed, hex(failed)))
    print(f"\nthe token's flags after each start with the stale stash: {seen}")
    assert tuple(seen) == values.STALE_STASH_FLAGS
    started, said, failed = start_with_stash(host, conf, pin_state.NEW)  # locked: the right PIN no longer helps
    assert not started, said
    assert values.STALE_STASH_ERROR in said, said
    assert failed == pin_state.LOCKED, hex(failed)
    # the page's way out of the lock: the security officer sets the user PIN (C_InitPIN), the stash is rewritten
    reset = host.run(f"pkcsconf -c {slot} -u -S {PINS['TOKEN_SO_PIN']} -n {pin_state.NEW} >/dev/null")
    assert reset.rc == 0, output(reset)
    started, said, failed = start_with_stash(host, conf, pin_state.NEW)
    assert started, said
    assert failed == 0, hex(failed)



# --- ACME with the request GSKit makes (issue 45, item 5) ------------------------------------------------------------


@pytest.mark.negative(invariant="the IHS page's ACME advice: the request names the site in a subjectAltName",
                      expects="an ACME CA refuses the CN-only request; the site keeps serving its certificate")
@pytest.mark.uses("ihs/apache/test-ca.sh", "ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet(CONF, DRIVER, checker="gskit-server")
def test_an_acme_ca_refuses_the_request_gskit_makes_without_a_subject_alternative_name(gskit_host):
    """The IHS renewal over ACME, as far as it goes here: while GSKit serves its token key, its key management
    library makes the next key in the token and a request whose only name is the subject's CN (the form of the
    study's -certreq -create, and of the harness: the library's argument for request extensions is not published,
    and four DER forms of a subjectAltName extension were refused with GSKKM_ERR_ASN). certbot submits it with
    --csr to Pebble, which refuses it at finalisation: an ACME CA that takes the names from subjectAltName only does
    not issue for such a request (gskcapicmd's -san_dnsname adds one). Nothing changes for the site: the old
    certificate keeps serving and no certificate is received."""
    host = gskit_host
    serve_gskit_key(host)
    old = served_fingerprint(host)
    acme.start_pebble(host, trust=False, site=False)  # certbot answers HTTP-01 itself: no site on port 80
    made = gskit_km(host, "--token-request", "ihscert-acme", SERVER, f"{WORK}/acme.csr")
    assert made.rc == 0, output(made)
    request = host.run(f"openssl req -in {WORK}/acme.csr -noout -text")
    assert f"Subject: CN={SERVER}" in request.stdout, output(request)
    assert "Subject Alternative Name" not in request.stdout, output(request)
    issued = acme.order_with_csr(host, f"{WORK}/acme.csr", f"{WORK}/acme")
    assert issued.rc == 1, output(issued)
    assert values.ACME_REFUSES_CN_ONLY in issued.stderr, output(issued)
    assert host.run(f"test -e {WORK}/acme/cert.pem").rc == 1
    assert gskit_km(host, "--token-labels").stdout.splitlines() == ["label ihscert"]
    assert served_fingerprint(host) == old
