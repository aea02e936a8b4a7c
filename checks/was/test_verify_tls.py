"""The WAS chapter's outcome, checked for real against a stand-in for WebSphere's HTTPS transport: a Java HTTPS
server (checks/standins/was/TokenHttpsServer.java, OpenJDK 21 + SunPKCS11; checks/hosts/jsse.py starts it) with the
page's token configuration at /etc/websphere/pkcs11-ica-token.cfg, its key generated IN the token by the page's
generate-token-key.sh, the token's provider last in the provider list (the current java.security), and exactly
the protocols and suites of set-ssl-config-current.py.

The purpose of the chapter has two parts, each with its own check from the guide and negative cases:
- the key is in the token and cannot leave it (check-key-in-token.sh): fails for a key keytool generated in
  software and imported (what this stand-in itself did before: the handshakes never reached the token), for a
  key generated without CKA_PRIVATE (its prime factor sits in clear in the token directory), and for the
  study's PKCS#12 key file;
- the handshakes sign in the token (check-token-signs.sh, openCryptoki's own counters): fails for the same
  software-signing key and for the PKCS#12 key.
And the provider order the page recommends is tested against the one it replaces: with the token's provider
first, the token also takes AES-GCM and the hashes, and every handshake fails.
"""

import re

import pytest

from checks.hosts.jsse import (
    AS_WAS,
    CONFIG,
    KEYSTORE_PASSWORD,
    SSL_NOW,
    STORE_NO_PROVIDER_NAME,
    VERIFY_KEY,
    opencryptoki,
    start_server,
)
from checks.hosts.steps import snippet_path
from checks.hosts.token import PINS, slot_of
from checks.hosts.util import output
from zrunbook.shown_output import assert_shown_output, normalise_common

HANDSHAKE = "was/verify/check-tls-handshake.sh"
HANDSHAKE_OUT = "was/verify/check-tls-handshake.out"
GENERATE = "was/pkcs11/generate-token-key.sh"
IN_TOKEN = "crypto/verify/check-key-in-token.sh"
SIGNS = "crypto/verify/check-token-signs.sh"
pytestmark = pytest.mark.from_state(VERIFY_KEY)
CA = "/tmp/verify/ca.pem"  # every server key of these tests is self-signed for localhost: their certificates


def key_in_token(host, target="localhost:9443"):
    return host.run(f"{AS_WAS} env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot_of(host)} "
                    f"bash {snippet_path(IN_TOKEN)} {target}")


def token_signs(host, target="localhost:9443", count=3):
    # the certificate the server presents, saved as the trust anchor of the reader's CA_FILE (self-signed here)
    host.run_expect([0], f"openssl s_client -connect {target} </dev/null 2>/dev/null | openssl x509 -out {CA}")
    return host.run(f"SERVICE_USER=wasadmin SLOT={slot_of(host)} CA_FILE={CA} bash {snippet_path(SIGNS)} "
                    f"{target} {count}")


def p11(host, args):
    return host.run(f"runuser -u wasadmin -- pkcs11-tool --module {opencryptoki(host)} --slot {slot_of(host)} "
                    f"--login --pin {PINS['TOKEN_USER_PIN']} {args}")


def remove_server_key(host):
    """The prepared key and certificate (alias was-server) removed, so that a negative case's key is the only one."""
    for kind in ("privkey", "cert", "pubkey"):
        p11(host, f"--delete-object --type {kind} --label was-server")
        p11(host, f"--delete-object --type {kind} --id $(printf was-server | od -An -tx1 | tr -d ' \\n')")


@pytest.fixture
def server(fresh_host):
    return fresh_host, start_server(fresh_host)


@pytest.mark.arch_dependent("the key is in the ICA token on s390x")
@pytest.mark.snippet(HANDSHAKE, checker="testinfra")
@pytest.mark.snippet(HANDSHAKE_OUT, checker="output-regenerated")
@pytest.mark.snippet(SSL_NOW, checker="testinfra")
def test_handshakes_use_the_current_suites_with_a_verified_certificate(server):
    host, ca = server
    tls13 = host.run(f"CA_FILE={ca} bash {snippet_path(HANDSHAKE)} localhost:9443")
    assert tls13.rc == 0, output(tls13)
    assert "SSL connection using TLSv1.3 / TLS_AES_256_GCM_SHA384" in tls13.stdout, output(tls13)
    assert "SSL certificate verify ok." in tls13.stdout
    tls12 = host.run(f"curl -sS -v -o /dev/null --tls-max 1.2 --cacert {ca} https://localhost:9443/")
    assert "SSL connection using TLSv1.2 / ECDHE-RSA-AES256-GCM-SHA384" in tls12.stderr, output(tls12)
    if host.zr_name == "debian13-amd64":
        assert_shown_output(HANDSHAKE_OUT, tls13.stdout,
                            lambda t: normalise_common(re.sub(r"(start|expire) date: .*", r"\1 date: <date>", t)))


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.arch_dependent("the key is in the ICA token on s390x")
@pytest.mark.snippet(GENERATE, "was/pkcs11/ica-token-*.cfg", checker="testinfra")
@pytest.mark.snippet(IN_TOKEN, checker="testinfra")
def test_the_served_key_is_private_sensitive_never_extractable_and_made_in_the_token(server):
    host, _ca = server
    result = key_in_token(host)
    assert result.rc == 0, output(result)
    assert "private, sensitive, never extractable, generated in the token" in result.stdout


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.arch_dependent("the key is in the ICA token on s390x")
@pytest.mark.snippet(SIGNS, checker="testinfra")
@pytest.mark.snippet("was/pkcs11/java-security-providers-current.security", checker="testinfra")
def test_every_handshake_signs_in_the_token_with_the_provider_last(server):
    host, _ca = server
    result = token_signs(host, count=4)
    assert result.rc == 0, output(result)
    assert "4 new TLS connections" in result.stdout


@pytest.mark.uses("ihs/httpd/pkcs11-driver-ubuntu-debian.conf", "was/wsadmin/set-ssl-config-current.py")
@pytest.mark.negative("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                      expects="both checks fail for a key keytool made in software")
@pytest.mark.snippet(IN_TOKEN, SIGNS, checker="testinfra")
def test_a_key_keytool_made_in_software_fails_both_checks(fresh_host):
    # keytool without -providerName generates the pair in software and imports it: what this stand-in did
    # until the checks counted the token's operations. Handshakes work, but no signature reaches the token.
    host = fresh_host
    remove_server_key(host)
    gen = host.run(f"{AS_WAS} keytool -genkeypair {STORE_NO_PROVIDER_NAME} -alias soft -keyalg RSA -keysize 2048 "
                   "-dname CN=localhost -ext san=dns:localhost -validity 30")
    assert gen.rc == 0, output(gen)
    start_server(host)
    assert host.run("curl -sk -o /dev/null https://localhost:9443/").rc == 0
    in_token = key_in_token(host)
    assert in_token.rc == 1, output(in_token)
    assert "CKA_LOCAL is false" in in_token.stderr
    assert "CKA_EXTRACTABLE is true" in in_token.stderr
    signs = token_signs(host)
    assert signs.rc == 1, output(signs)
    assert "signed outside the token" in signs.stderr


@pytest.mark.uses("ihs/httpd/pkcs11-driver-ubuntu-debian.conf", "was/wsadmin/set-ssl-config-current.py")
@pytest.mark.only_hosts("debian13-amd64", why="it looks for the key in the soft token's folder (swtok)")
@pytest.mark.snippet(IN_TOKEN, "was/pkcs11/ica-token-*.cfg", checker="testinfra")
def test_a_key_generated_without_cka_private_lies_in_clear_in_the_token_directory(fresh_host):
    # The page's configuration without its CKA_PRIVATE line: SunPKCS11 then makes a public token object, which
    # openCryptoki stores unencrypted. The check refuses it, and one of its prime factors is in a file.
    host = fresh_host
    remove_server_key(host)
    host.run_expect([0], f"sed -i '/CKA_PRIVATE = true/d' {CONFIG}")
    gen = host.run(f"{AS_WAS} env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} KEYTOOL=keytool STORETYPE=PKCS11 "
                   f"PROVIDER_CLASS=sun.security.pkcs11.SunPKCS11 bash {snippet_path(GENERATE)} public localhost "
                   "/tmp/verify/public.pem")
    assert gen.rc == 0, output(gen)
    start_server(host)
    in_token = key_in_token(host)
    assert in_token.rc == 1, output(in_token)
    assert "CKA_PRIVATE is false" in in_token.stderr
    modulus = int(host.check_output("openssl x509 -noout -modulus -in /tmp/verify/public.pem").split("=")[1], 16)
    files = host.check_output("find /var/lib/opencryptoki/swtok/TOK_OBJ -type f -name 'OB*'").split()
    found = []
    for path in files:
        data = host.file(path).content
        found += [path for off in range(len(data) - 128)
                  if (p := int.from_bytes(data[off:off + 128], "big")).bit_length() > 1000 and modulus % p == 0]
    assert found, "no prime factor of the key's modulus in clear in the token's object files"


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.negative("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                      expects="both checks fail for the study's PKCS #12 key file")
@pytest.mark.snippet(IN_TOKEN, SIGNS, checker="testinfra")
def test_the_studys_pkcs12_key_file_fails_both_checks(fresh_host):
    # Scenario 1 of the study: the server key in the PKCS#12 NodeDefaultKeyStore, the token only behind the
    # provider list. With the current order nothing reaches the token, and the key is in a file.
    host = fresh_host
    gen = host.run(f"{AS_WAS} keytool -genkeypair -keystore /tmp/verify/key.p12 -storetype PKCS12 "
                   f"-storepass {KEYSTORE_PASSWORD} -alias default -keyalg RSA -keysize 2048 -dname CN=localhost "
                   "-ext san=dns:localhost -validity 30")
    assert gen.rc == 0, output(gen)
    start_server(host, pkcs12="/tmp/verify/key.p12")
    assert "PrivateKeyEntry" in host.check_output("keytool -list -keystore /tmp/verify/key.p12 </dev/null")
    in_token = key_in_token(host)
    assert in_token.rc == 1, output(in_token)
    assert "is not in this token" in in_token.stderr
    signs = token_signs(host)
    assert signs.rc == 1, output(signs)
    assert "signed outside the token" in signs.stderr


@pytest.mark.negative("was/pkcs11/java-security-providers-current.security",
                      expects="with the token's provider first every handshake fails and the token serves AES-GCM")
@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.only_hosts("debian13-amd64", why="the outcome is the soft token's: it takes over AES-GCM and the hashes")
@pytest.mark.snippet("was/pkcs11/java-security-providers-current.security", checker="testinfra")
def test_with_the_token_provider_first_the_token_takes_the_ciphers_and_handshakes_fail(fresh_host):
    # The study's order (the token's provider first) against OpenJDK 21 and the soft token: the token now also
    # serves AES-GCM and the handshake hashes, and every handshake fails; the reason the page lists it last.
    host = fresh_host
    start_server(host, position="first")
    host.run_expect([0], "pkcsstats -R")
    for opts in ("", "--tls-max 1.2"):
        res = host.run(f"curl -sS -o /dev/null {opts} --cacert {host.zr_prepared} https://localhost:9443/")
        assert res.rc != 0, output(res)
    used = host.check_output(f"pkcsstats -U wasadmin -s {slot_of(host)}")
    assert "CKM_AES_GCM" in used, used
