"""The open-source equivalent: Apache httpd + mod_ssl served for real on the container hosts.

Two forms: the recommended one (key in a file, OpenSSL 3 using CPACF and Crypto Express itself) and
the one that mirrors IHS (key in the openCryptoki token through pkcs11-provider). Each is started
with the chapter's snippets and probed with openssl s_client inside the container: TLS 1.2 and 1.3
negotiate the configured suites, TLS 1.1 and an unconfigured suite are refused. The token form also
proves that the token signs. A TLS policy scan (sslyze, Mozilla intermediate) runs from this machine
against a container whose port is published on the loopback address.
"""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checks.hosts import amd64_only
from checks.hosts.apache import (
    ECDSA_CERT,
    ECDSA_SITE,
    QEMU_SIGALGS,
    TEST_CA,
    TOKEN_KEY,
    ecdsa_key_step,
    handshake,
    serve_files,
    serve_token,
    serve_token_ecdsa,
    start,
    token_public_key,
    use_prefork,
)
from checks.hosts.steps import arch, run_snippet, snippet_path
from checks.hosts.token import LABEL, PINS, slot_of, token_env
from checks.hosts.util import TESTSSL_RATING_CHECKS
from zrunbook.ihs.distro_paths import library, on_host

TLS12 = {"ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-AES128-GCM-SHA256"}
TLS13 = {"TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"}
SITE = "ihs/apache/apache-tls-openssl.conf"
# the hosts are Debian: the Ubuntu/Debian OpenSSL configuration is the one served (test_library_paths.py
# checks the RHEL/SLES one against it)
TOKEN_SNIPPETS = ("ihs/apache/apache-tls-pkcs11.conf", "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf",
                  "ihs/apache/create-token-key-and-csr.sh", "ihs/apache/set-httpd-openssl-conf.sh")


def field(result, name):
    for line in result.stdout.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {name!r} in:\n{result.stdout}")


SHA512_SIGALGS = ("-sigalgs", QEMU_SIGALGS)  # the s390x host's client of a token key (checks/hosts/apache.py)


def assert_only_configured_protocols_and_suites(host, ca, token=False):
    sig = SHA512_SIGALGS if token and host.zr_name == "debian13-s390x" else ()
    r = handshake(host, ca, "-tls1_2", *sig)
    assert r.rc == 0, r.stdout
    assert field(r, "Protocol version") == "TLSv1.2"
    assert field(r, "Ciphersuite") in TLS12
    r = handshake(host, ca, "-tls1_3", *sig)
    assert r.rc == 0, r.stdout
    assert field(r, "Protocol version") == "TLSv1.3"
    assert field(r, "Ciphersuite") in TLS13
    assert field(r, "Peer certificate") == "CN=www.example.com"
    refused = {
        "TLS 1.1": ("-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"),
        "TLS 1.2 with AES256-SHA": ("-tls1_2", "-cipher", "AES256-SHA"),
        "TLS 1.2 with ECDHE-RSA-CHACHA20-POLY1305": ("-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"),
        "TLS 1.3 with TLS_CHACHA20_POLY1305_SHA256": ("-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"),
    }
    for what, args in refused.items():
        r = handshake(host, ca, *args)
        assert r.rc != 0, f"{what} was accepted:\n{r.stdout}"


@pytest.mark.snippet(SITE, checker="apache-tls")
def test_openssl_site_serves_only_tls12_and_tls13_with_the_configured_suites(fresh_host):
    ca = serve_files(fresh_host)
    assert_only_configured_protocols_and_suites(fresh_host, ca)


def http2_and_hsts(host, ca) -> tuple[str, str]:
    """The protocol a current curl gets and the HSTS header it sees."""
    r = host.run(f"curl -sS -o /dev/null -D - --http2 --cacert {ca} --resolve www.example.com:443:127.0.0.1 "
                 "-w 'protocol: %{http_version}\\n' https://www.example.com/")
    assert r.rc == 0, r.stdout + r.stderr
    protocol = re.search(r"^protocol: (\S+)$", r.stdout, re.M).group(1)
    hsts = re.search(r"^strict-transport-security: (.*?)\r?$", r.stdout, re.M | re.I)
    return protocol, hsts.group(1) if hsts else ""


@pytest.mark.snippet(SITE, checker="apache-tls")
def test_openssl_site_speaks_http2_and_sends_hsts(fresh_host):
    ca = serve_files(fresh_host)
    assert http2_and_hsts(fresh_host, ca) == ("2", "max-age=63072000")


@pytest.mark.negative("ihs/apache/apache-tls-2013-equivalent.conf",
                      expects="the 2013 site answers over HTTP/1.1 without an HSTS header")
@pytest.mark.snippet("ihs/apache/apache-tls-2013-equivalent.conf", checker="apache-tls")
def test_the_http2_and_hsts_check_fails_on_the_2013_equivalent_site(fresh_host):
    # Negative case: the 2013 choices, with neither Protocols h2 nor the HSTS header.
    ca = serve_files(fresh_host, "ihs/apache/apache-tls-2013-equivalent.conf")
    assert http2_and_hsts(fresh_host, ca) == ("1.1", "")


@pytest.mark.uses("ihs/apache/apache-tls-2013-equivalent.conf")
@pytest.mark.snippet("ihs/apache/enable-tls-site-debian.sh", checker="apache-tls")
def test_http2_enabled_for_another_site_breaks_http2_clients_of_the_2013_site(fresh_host):
    """Why the site step enables mod_http2 only for a site with a Protocols h2 line: Debian's http2.conf then
    offers h2 to every site, and h2 refuses the 2013 suite (AES256-SHA), so an HTTP/2 client fails."""
    ca = serve_files(fresh_host, "ihs/apache/apache-tls-2013-equivalent.conf")
    assert fresh_host.run("test -e /etc/apache2/mods-enabled/http2.load").rc == 1  # the step left it off
    fresh_host.run_expect([0], "a2enmod -q http2 && apache2ctl restart")
    r = fresh_host.run(f"curl -sS -o /dev/null --http2 --cacert {ca} --resolve www.example.com:443:127.0.0.1 "
                       "https://www.example.com/")
    assert r.rc != 0, r.stdout + r.stderr


@pytest.mark.arch_dependent("the key is in the ICA token (libica) on s390x")
@pytest.mark.snippet(*TOKEN_SNIPPETS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_token_site_serves_only_tls12_and_tls13_with_the_key_in_the_token(fresh_host):
    ca = serve_token(fresh_host)
    assert_only_configured_protocols_and_suites(fresh_host, ca, token=True)
    # no private key file: the certificate's public key is the token's
    cert_key = fresh_host.run("openssl x509 -in /etc/ssl/certs/www.example.com.crt -noout -pubkey").stdout
    token_key = fresh_host.run(
        "OPENSSL_CONF=/etc/ssl/openssl-pkcs11.conf openssl pkey -pubin -pubout "
        f"-in 'pkcs11:token={LABEL};object=apachekey;type=public'").stdout
    assert cert_key.strip(), "no public key in the certificate"
    assert cert_key == token_key
    pin = fresh_host.file("/etc/ssl/private/apache-token.pin")  # root's alone, and httpd still serves (above)
    assert (pin.user, pin.group, pin.mode) == ("root", "root", 0o600)


@pytest.mark.snippet(*TOKEN_SNIPPETS, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_token_key_and_httpd_environment_snippets_are_safe_to_run_twice(fresh_host):
    serve_token(fresh_host)
    again = fresh_host.run(f"{token_env()} bash /snippets/ihs/apache/create-token-key-and-csr.sh")
    assert again.rc == 0, again.stdout + again.stderr
    assert f"exists in token {LABEL} already: keeping it" in again.stdout
    assert run_snippet(fresh_host, "ihs/apache/set-httpd-openssl-conf.sh").rc == 0
    assert fresh_host.run("grep -c '^export OPENSSL_CONF=' /etc/apache2/envvars").stdout.strip() == "1"


@pytest.mark.uses("ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SHA256)
@pytest.mark.snippet(*TOKEN_SNIPPETS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_every_handshake_is_signed_by_the_token(fresh_host):
    """OpenSC's pkcs11-spy between pkcs11-provider and openCryptoki logs each C_Sign of httpd's workers."""
    ca = serve_token(fresh_host)
    spy = fresh_host.run("ls /usr/lib/*-linux-gnu/pkcs11/pkcs11-spy.so").stdout.strip()
    real = fresh_host.run(f"readlink -f {on_host(fresh_host, library('ubuntu-debian'))}").stdout.strip()
    fresh_host.run_expect([0],
                          f"sed -i 's|^pkcs11-module-path = .*|pkcs11-module-path = {spy}|' "
                          "/etc/ssl/openssl-pkcs11.conf"
                        f" && printf 'export PKCS11SPY={real} PKCS11SPY_OUTPUT=/tmp/spy.log\\n' >> /etc/apache2/envvars"
                        " && apache2ctl stop && sleep 1 && apache2ctl start && sleep 1 && chmod 666 /tmp/spy.log")

    def signs():
        return int(fresh_host.run("grep -c 'C_SignInit' /tmp/spy.log || true").stdout.strip() or 0)

    before = signs()
    for proto in ("-tls1_2", "-tls1_3", "-tls1_3"):
        assert handshake(fresh_host, ca, proto).rc == 0
    assert signs() - before >= 3, fresh_host.run("tail -40 /tmp/spy.log").stdout


def sslyze(host, ca_file: Path, tmp_path: Path):
    """sslyze from this machine, run inside the container's network namespace (it has no other network)."""
    exe = Path(sys.executable).with_name("sslyze")
    if not exe.exists():
        pytest.fail(f"sslyze is not installed next to {sys.executable}: pip install 'sslyze>=6.3,<7'", pytrace=False)
    out = tmp_path / "scan.json"
    # the certificate's name with the address to connect to, so no DNS is needed
    target = f"www.example.com:{host.zr_port}{{127.0.0.1}}"
    if not shutil.which("nsenter"):
        pytest.fail("nsenter is not installed: apt-get install util-linux", pytrace=False)
    proc = subprocess.run(["nsenter", f"--net={host.zr_netns}", str(exe), "--mozilla_config=intermediate",
                           f"--certinfo_ca_file={ca_file}",
                           f"--json_out={out}", target], capture_output=True, text=True, timeout=300)
    return proc, json.loads(out.read_text()) if out.exists() else None


def path_validation(scan):
    """(trust store, success, error) per certificate deployment: what a failed scan reports first."""
    info = scan["server_scan_results"][0]["scan_result"]["certificate_info"]["result"]
    return [(r["trust_store"]["name"], r["was_validation_successful"], r.get("validation_error"))
            for d in info["certificate_deployments"] for r in d["path_validation_results"]]


def scan_site(host, site, tmp_path):
    ca = serve_files(host, site)
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(host.file(ca).content_string)
    return sslyze(host, ca_file, tmp_path)


@pytest.mark.parametrize("published_host", ["debian13-amd64"], indirect=True)
@pytest.mark.snippet(SITE, checker="apache-tls")
def test_tls_policy_scan_finds_the_openssl_site_compliant_with_mozilla_intermediate(published_host, tmp_path):
    proc, scan = scan_site(published_host, SITE, tmp_path)
    assert scan is not None, proc.stdout + proc.stderr
    assert proc.returncode == 0, json.dumps(path_validation(scan), indent=1)
    assert f"www.example.com:{published_host.zr_port}: OK - Compliant." in proc.stdout, proc.stdout[-3000:]


@pytest.mark.parametrize("published_host", ["debian13-amd64"], indirect=True)
@pytest.mark.snippet("ihs/apache/apache-tls-2013-equivalent.conf", checker="apache-tls")
def test_tls_policy_scan_reports_the_2013_choices_as_not_compliant(published_host, tmp_path):
    proc, scan = scan_site(published_host, "ihs/apache/apache-tls-2013-equivalent.conf", tmp_path)
    assert scan is not None, proc.stdout + proc.stderr
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "FAILED - Not compliant." in proc.stdout, proc.stdout[-3000:]
    assert "* tls_versions: TLS versions {" in proc.stdout, proc.stdout[-3000:]
    assert "* ciphers: Cipher suites {'TLS_RSA_WITH_AES_256_CBC_SHA'} are supported" in proc.stdout
    assert "certificate_path_validation" not in proc.stdout  # the certificate is fine: only the TLS choices fail


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet("ihs/apache/compare-openssl-hardware-paths.sh", checker="testinfra")
def test_openssl_a_b_masks_cpacf_and_cex_on_ibm_z(host):
    r = run_snippet(host, "ihs/apache/compare-openssl-hardware-paths.sh")
    assert r.rc == 0, r.stdout + r.stderr
    a = next(line for line in r.stdout.splitlines() if line.startswith("A (default):"))
    b = next(line for line in r.stdout.splitlines() if line.startswith("B (z900;nocex):"))
    assert "kimd:0x9000000000000000" in a  # SHA-512 via CPACF KIMD, as qemu emulates it
    assert "env:z900;nocex" in b
    assert "kimd:0x0:0x0" in b
    # a container has no /dev/z90crypt: the snippet says RSA stays in software
    assert "CEX: no /dev/z90crypt" in r.stdout


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet("ihs/apache/compare-openssl-hardware-paths.sh", checker="testinfra")
def test_libcrypto_opens_z90crypt_unless_nocex_is_set(host):
    """OpenSSL 3.2+ on s390x tries /dev/z90crypt at start-up; OPENSSL_s390xcap=nocex stops it (qemu strace)."""
    default = host.run("QEMU_STRACE=1 openssl version 2>&1 | grep z90crypt")
    masked = host.run("QEMU_STRACE=1 OPENSSL_s390xcap=nocex openssl version 2>&1 | grep z90crypt")
    assert 'openat(AT_FDCWD,"/dev/z90crypt",O_RDWR' in default.stdout
    assert masked.stdout == ""


@pytest.mark.negative("ihs/apache/compare-openssl-hardware-paths.sh",
                      expects="off IBM Z the check stops: This check is for Linux on IBM Z (s390x)")
@pytest.mark.only_hosts("debian13-amd64", why="it checks the refusal off IBM Z")
@pytest.mark.snippet("ihs/apache/compare-openssl-hardware-paths.sh", checker="testinfra")
def test_openssl_a_b_refuses_to_run_off_ibm_z(host):
    r = run_snippet(host, "ihs/apache/compare-openssl-hardware-paths.sh")
    assert r.rc == 1
    assert "This check is for Linux on IBM Z (s390x)" in r.stderr


def root_only_pin_site(host) -> str:
    """Debian's ssl-cert folder (root:ssl-cert 0710, httpd's user not in ssl-cert), the key step's root:root 0600 PIN
    file in it, and the token site served from it; returns the site's CA file."""
    pin = "/etc/ssl/private/apache-token.pin"
    host.run_expect([0], f"groupadd -f ssl-cert && rm -f {pin} && chown root:ssl-cert /etc/ssl/private"
                         " && chmod 0710 /etc/ssl/private")
    done = host.run(f"{token_env()} bash /snippets/ihs/apache/create-token-key-and-csr.sh")
    assert done.rc == 0, done.stdout + done.stderr
    folder, file = host.file("/etc/ssl/private"), host.file(pin)
    assert (folder.user, folder.group, folder.mode) == ("root", "ssl-cert", 0o710)  # left as it was
    assert (file.user, file.group, file.mode) == ("root", "root", 0o600)
    assert host.run(f"runuser -u www-data -- cat {pin}").rc != 0
    return serve_token(host)


@pytest.mark.arch_dependent("the token library's path and the ICA token on s390x")
@pytest.mark.snippet("ihs/apache/create-token-key-and-csr.sh", checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_httpd_serves_with_a_root_only_pin_file_in_a_folder_its_user_cannot_enter(fresh_host):
    """What httpd really needs: pkcs11-provider 1.0 reads the PIN file once, when OpenSSL loads the provider in
    httpd's root parent (provider.c), and the workers inherit the PIN. With the PIN file where httpd's user cannot
    read it, httpd still serves: at start and right after a graceful restart (new workers). The same at once from
    16 clients: the next test."""
    ca = root_only_pin_site(fresh_host)
    sig = ("-sigalgs", QEMU_SIGALGS) if arch(fresh_host) == "s390x" else ()  # qemu's ICA token has no SHA-256
    assert all(handshake(fresh_host, ca, *sig).rc == 0 for _ in range(4))
    fresh_host.run_expect([0], "apache2ctl graceful")
    assert all(handshake(fresh_host, ca, *sig).rc == 0 for _ in range(4))


@pytest.mark.snippet("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/use-prefork-mpm-debian.sh",
                     checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_new_workers_with_a_root_only_pin_file_serve_16_clients_at_once(fresh_host):
    """The root-only PIN file, 16 clients at once right after a graceful restart, with the page's prefork MPM. With
    Debian's event MPM a worker's threads wait at most one second for its first token login, and CI once lost 11 of
    16 handshakes that way (the page's cold-start finding; test_apache_cold_start.py holds both cases). On amd64
    only: under qemu a token login alone takes most of that second. Logs at ssl:info, so that a failure names its
    cause in the assertion."""
    fresh_host.run_expect([0], "echo 'LogLevel warn ssl:info' > /etc/apache2/conf-enabled/zz-ssl-info.conf")
    ca = root_only_pin_site(fresh_host)
    use_prefork(fresh_host)
    fresh_host.run_expect([0], "apache2ctl graceful")
    burst = fresh_host.run(f"for i in $(seq 16); do echo | openssl s_client -connect 127.0.0.1:443 -servername "
                           f"www.example.com -CAfile {ca} -verify_return_error -brief >/dev/null 2>&1 && echo ok & "
                           "done; wait")
    assert burst.stdout.count("ok") == 16, fresh_host.run("grep -v 'engine\\|DSO\\|SSL Library Error' "
                                                          "/var/log/apache2/error.log | tail -20").stdout




def scan_with_testssl(host, site: str) -> dict[str, str]:
    """A second, independent scanner: Debian's testssl.sh (3.2, in the amd64 image) inside the container against
    its own httpd, trusting the test CA. Returns its flat JSON findings as id -> finding. The token sites are served
    the token page's way (on a host from TOKEN_KEY), the others with a key file."""
    ca = TOKEN_SITES[site](host) if site in TOKEN_SITES else serve_files(host, site)
    run = host.run(f"testssl {TESTSSL_RATING_CHECKS} --quiet --color 0 --warnings off --add-ca {ca} --ip 127.0.0.1 "
                   "--jsonfile /tmp/testssl.json https://www.example.com/")
    assert host.file("/tmp/testssl.json").exists, run.stdout[-3000:] + run.stderr
    findings = json.loads(host.file("/tmp/testssl.json").content_string)
    return {f["id"]: f["finding"] for f in findings}


@pytest.mark.only_hosts("debian13-amd64", why="testssl.sh is in the amd64 image only")
@pytest.mark.snippet(SITE, checker="apache-tls")
def test_testssl_rates_the_openssl_site_a_plus_with_no_grade_cap(fresh_host):
    found = scan_with_testssl(fresh_host, SITE)
    assert found.get("overall_grade") == "A+", {k: v for k, v in found.items() if "grade" in k or "score" in k}
    assert not [k for k in found if k.startswith("grade_cap_reason")], found
    assert found.get("HSTS_time", "").startswith("730 days"), found.get("HSTS_time")


TOKEN_SITES = {"ihs/apache/apache-tls-pkcs11.conf": serve_token, ECDSA_SITE: serve_token_ecdsa}


@pytest.mark.only_hosts("debian13-amd64", why="testssl.sh is in the amd64 image only")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.parametrize("site", [pytest.param(s, marks=pytest.mark.snippet(s, checker="apache-tls"),
                                               id=s.rsplit("/")[-1]) for s in TOKEN_SITES])
def test_testssl_rates_the_token_sites_a_plus_like_the_openssl_site(fresh_host, site):
    """The token sites keep the OpenSSL site's HSTS and HTTP/2 (an earlier version dropped them: A, 'HSTS is not
    offered'): A+ with no grade cap, the key in the token."""
    found = scan_with_testssl(fresh_host, site)
    assert found.get("overall_grade") == "A+", {k: v for k, v in found.items() if "grade" in k or "score" in k}
    assert not [k for k in found if k.startswith("grade_cap_reason")], found
    assert found.get("HSTS_time", "").startswith("730 days"), found.get("HSTS_time")


@pytest.mark.only_hosts("debian13-amd64", why="testssl.sh is in the amd64 image only")
@pytest.mark.snippet("ihs/apache/apache-tls-2013-equivalent.conf", checker="apache-tls")
def test_testssl_caps_the_2013_choices_at_b(fresh_host):
    found = scan_with_testssl(fresh_host, "ihs/apache/apache-tls-2013-equivalent.conf")
    assert found.get("overall_grade") == "B", found.get("overall_grade")
    caps = {v for k, v in found.items() if k.startswith("grade_cap_reason")}
    assert {"Grade capped to B. TLS 1.0 offered", "Grade capped to B. TLS 1.1 offered",
            "Grade capped to B. Forward Secrecy (FS) is not supported",
            "Grade capped to A. HSTS is not offered"} <= caps


# ECDSA P-256 in the token (the page's section on a second key): mod_ssl serves the ECDSA certificate to clients
# that offer ECDSA signatures and the RSA one to the others; both keys stay in the token.
ECDSA_SNIPPETS = (ECDSA_SITE, "ihs/apache/create-token-key-and-csr.sh", "ihs/apache/test-ca.sh")
CHECK_KEY = "crypto/verify/check-key-in-token.sh"
CHECK_SIGNS = "crypto/verify/check-token-signs.sh"
BOTH_KEYS = "rsa_pss_rsae_sha256 ECDSA+SHA256"  # one list per certificate, as the page gives them


def check_key_in_token(host, sigalgs: str):
    """The page's outcome check as httpd's user against the local site, offering only sigalgs."""
    env = (f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot_of(host)} SERVER_NAME=www.example.com "
           f"SIGALGS={shlex.quote(sigalgs)}")
    return host.run(f"runuser -u www-data -- env {env} bash {snippet_path(CHECK_KEY)} localhost:443")


def check_token_signs(host, ca: str, sigalgs: str):
    """The page's signing check as root against the local site: 2 connections per list of signature schemes."""
    env = f"SERVICE_USER=www-data SLOT={slot_of(host)} CA_FILE={ca} SERVER_NAME=www.example.com " \
          f"SIGALGS={shlex.quote(sigalgs)}"
    return host.run(f"env {env} bash {snippet_path(CHECK_SIGNS)} localhost:443 2")


def ecdsa_key_in_a_file(host, curve: str) -> None:
    """The ECDSA site's token key replaced by a key file on curve, with its certificate from the test CA."""
    key = "/etc/ssl/private/ec-file.key"
    host.run_expect([0], f"openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:{curve} -out {key}"
                         f" && chgrp www-data {key} && chmod 0640 {key}"
                         f" && openssl req -new -key {key} -subj /CN=www.example.com -out /tmp/ec-file.csr")
    host.run_expect([0], f"CA_DIR=/root/zr-test-ca bash {snippet_path(TEST_CA)} sign /tmp/ec-file.csr {ECDSA_CERT}")
    host.run_expect([0], "sed -i 's#\"pkcs11:token=IBMICATOK;object=apachekey-ec;type=private\"#"
                         f"{key}#' /etc/apache2/sites-available/tls.conf"
                         " && apache2ctl -t && apache2ctl graceful && sleep 2")


@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_P256)
@pytest.mark.snippet(*ECDSA_SNIPPETS, CHECK_KEY, CHECK_SIGNS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_ecdsa_site_serves_the_p256_key_of_the_token_and_the_rsa_key_to_other_clients(fresh_host):
    ca = serve_token_ecdsa(fresh_host)
    ecdsa = handshake(fresh_host, ca, "-tls1_3", "-sigalgs", "ECDSA+SHA256")
    assert ecdsa.rc == 0, ecdsa.stdout
    assert field(ecdsa, "Signature type") == "ecdsa_secp256r1_sha256"
    tls12 = handshake(fresh_host, ca, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256")
    assert tls12.rc == 0, tls12.stdout
    assert field(tls12, "Ciphersuite") == "ECDHE-ECDSA-AES128-GCM-SHA256"
    rsa = handshake(fresh_host, ca, "-tls1_3", "-sigalgs", "rsa_pss_rsae_sha256")
    assert rsa.rc == 0, rsa.stdout
    assert field(rsa, "Signature type") == "rsa_pss_rsae_sha256"
    served = fresh_host.run(f"openssl x509 -in {ECDSA_CERT} -noout -pubkey").stdout
    assert "BEGIN PUBLIC KEY" in served
    assert served == token_public_key(fresh_host, "apachekey-ec")
    for sigalgs in ("ECDSA+SHA256", "rsa_pss_rsae_sha256", BOTH_KEYS):
        r = check_key_in_token(fresh_host, sigalgs)
        assert r.rc == 0, r.stdout + r.stderr
        # what it proves, no more: the soft token keeps the key encrypted in its store, not as a secure key
        assert "(token model Soft)" in r.stdout, r.stdout
        assert "encrypted at rest in the token's store (TOK_OBJ), not a secure key" in r.stdout, r.stdout
        assert "not exportable through PKCS #11" in r.stdout, r.stdout
    signs = check_token_signs(fresh_host, ca, BOTH_KEYS)  # each kind's counter grows with its own connections
    assert signs.rc == 0, signs.stdout + signs.stderr
    said = signs.stdout
    assert re.search(r"^rsa_pss_rsae_sha256: 2 new TLS connections, [2-9] RSA and 0 ECDSA operations", said, re.M)
    assert re.search(r"^ECDSA\+SHA256: 2 new TLS connections, 0 RSA and [2-9] ECDSA operations", said, re.M)


@pytest.mark.negative("crypto/verify/check-token-signs.sh",
                      expects="the check shows libica signed in software where no adapter answers")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(CHECK_KEY, CHECK_SIGNS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_signing_check_shows_that_libica_signed_in_software_where_no_adapter_answers(fresh_host):
    """The ICA token on a host without Crypto Express (qemu): pkcsstats counts each signature in the token, and
    libica's own counters for httpd's user show them all in software. The check says so, names the token model,
    and with REQUIRE_HARDWARE=yes fails: pkcsstats alone would have passed this host as "signing in hardware"."""
    ca = serve_token(fresh_host)
    key = check_key_in_token(fresh_host, QEMU_SIGALGS)
    assert key.rc == 0, key.stdout + key.stderr
    assert "(token model ICA)" in key.stdout, key.stdout
    signs = check_token_signs(fresh_host, ca, QEMU_SIGALGS)
    assert signs.rc == 0, signs.stdout + signs.stderr
    said = re.search(r"2 new TLS connections, (\d+) RSA and 0 ECDSA operations in slot \d+ \(token model ICA\) by "
                     r"www-data; libica \(icastats -S\): (\d+) in hardware, (\d+) in software", signs.stdout)
    assert said, signs.stdout + signs.stderr
    rsa, hardware, software = map(int, said.groups())
    assert rsa >= 2, said.group(0)
    assert hardware == 0, said.group(0)  # no adapter under qemu
    assert software >= 2, said.group(0)
    assert "libica computed" in signs.stderr
    assert "in software: no Crypto Express adapter" in signs.stderr
    # why the check sums every user's counters: libica counted the workers' signatures under root, the user httpd's
    # parent had when it loaded libica, and none under www-data
    per_user = {user: fresh_host.run(f"icastats -U {user}").stdout for user in ("root", "www-data")}
    counts = {user: [int(n) for line in table.splitlines() if line.split("|")[0].strip() in ("RSA-ME", "RSA-CRT")
                     for column in line.split("|")[1:] for n in column.split()]
              for user, table in per_user.items()}
    assert sum(counts["root"]) > 0, per_user["root"]
    assert sum(counts["www-data"]) == 0, per_user["www-data"]
    strict = fresh_host.run(f"env REQUIRE_HARDWARE=yes SERVICE_USER=www-data SLOT={slot_of(fresh_host)} CA_FILE={ca} "
                            f"SERVER_NAME=www.example.com SIGALGS={shlex.quote(QEMU_SIGALGS)} "
                            f"bash {snippet_path(CHECK_SIGNS)} localhost:443 2")
    assert strict.rc == 1, strict.stdout + strict.stderr
    assert "libica signed in software" in strict.stderr


@pytest.mark.negative("crypto/verify/check-key-in-token.sh",
                      expects="the check fails for an ECDSA key served from a file")
@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_P256)
@pytest.mark.snippet(CHECK_KEY, CHECK_SIGNS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_key_in_token_check_fails_for_an_ecdsa_key_in_a_file(fresh_host):
    """Negative case: the same site with its ECDSA key in a file: the token's P-256 key does not match it, and the
    ECDSA connections make the token sign nothing (the RSA ones still do). With openCryptoki's statistics switched
    off the signing check says it cannot tell, instead of blaming the key."""
    ca = serve_token_ecdsa(fresh_host)
    ecdsa_key_in_a_file(fresh_host, "P-256")
    r = check_key_in_token(fresh_host, "ECDSA+SHA256")
    assert r.rc == 1, r.stdout + r.stderr
    assert "no private key in slot" in r.stderr
    assert "has the public key of the certificate" in r.stderr
    assert check_key_in_token(fresh_host, "rsa_pss_rsae_sha256").rc == 0  # the RSA key is still the token's
    both = check_key_in_token(fresh_host, BOTH_KEYS)
    assert both.rc == 1
    assert "ECDSA+SHA256 (subject CN = www.example.com, key id-ecPublicKey): no private key in slot" in both.stderr
    assert "rsa_pss_rsae_sha256:" not in both.stderr
    signs = check_token_signs(fresh_host, ca, BOTH_KEYS)
    assert signs.rc == 1, signs.stdout + signs.stderr
    assert "ECDSA+SHA256: 2 new TLS connections, 0 RSA and 0 ECDSA operations" in signs.stderr
    assert "signed outside the token" in signs.stderr
    fresh_host.run_expect([0], "echo 'statistics (off)' >> /etc/opencryptoki/opencryptoki.conf")
    off = check_token_signs(fresh_host, ca, BOTH_KEYS)
    assert off.rc == 5, off.stdout + off.stderr
    assert "cannot tell: openCryptoki's statistics are switched off" in off.stderr


HYBRID = "crypto/verify/check-hybrid-group.sh"


@pytest.mark.snippet(HYBRID, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_hybrid_group_check_passes_on_the_token_site(fresh_host):
    serve_token(fresh_host)
    sig = f"SIGALGS={shlex.quote(QEMU_SIGALGS)} " if arch(fresh_host) == "s390x" else ""
    r = fresh_host.run(f"{sig}SERVER_NAME=www.example.com bash {snippet_path(HYBRID)} localhost:443")
    assert r.rc == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "localhost:443 agrees to the key exchange X25519MLKEM768 over TLS 1.3."


@pytest.mark.negative("crypto/verify/check-hybrid-group.sh",
                      expects="the check fails when the groups line drops the hybrid group")
@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SHA256)
@pytest.mark.snippet(HYBRID, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_hybrid_group_check_fails_when_the_groups_line_drops_it(fresh_host):
    """The site's Groups line without X25519MLKEM768: classical clients still connect, the check fails; asked for a
    group this OpenSSL does not know, it cannot tell (exit 5)."""
    ca = serve_token(fresh_host)
    fresh_host.run_expect([0], "sed -i 's/Groups X25519MLKEM768:/Groups /' /etc/apache2/sites-available/tls.conf")
    start(fresh_host)
    assert handshake(fresh_host, ca, "-tls1_3").rc == 0  # nothing else notices
    r = fresh_host.run(f"SERVER_NAME=www.example.com bash {snippet_path(HYBRID)} localhost:443")
    assert r.rc == 1, r.stdout + r.stderr
    assert "does not agree to X25519MLKEM768 over TLS 1.3" in r.stderr, r.stderr
    unknown = fresh_host.run(f"GROUP=NoSuchGroup SERVER_NAME=www.example.com bash {snippet_path(HYBRID)} localhost:443")
    assert unknown.rc == 5, unknown.stdout + unknown.stderr
    assert "cannot tell: this openssl" in unknown.stderr

@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_P256)
@pytest.mark.snippet(CHECK_KEY, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_without_sigalgs_the_key_check_judges_both_certificates_of_the_two_key_site(fresh_host):
    """Without the profile's lists the check asks for each key type itself: the two-key token site passes with both
    certificates counted, and the same site with its ECDSA key in a file fails, naming that certificate (before, it
    judged only the certificate OpenSSL's default handshake got, and passed)."""
    serve_token_ecdsa(fresh_host)
    both = check_key_in_token(fresh_host, "")
    assert both.rc == 0, both.stdout + both.stderr
    assert "The key of each certificate localhost:443 presents (2)" in both.stdout, both.stdout
    ecdsa_key_in_a_file(fresh_host, "P-256")
    r = check_key_in_token(fresh_host, "")
    assert r.rc == 1, r.stdout + r.stderr
    assert "key id-ecPublicKey): no private key in slot" in r.stderr, r.stderr
    assert "key rsaEncryption)" not in r.stderr, r.stderr


@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_P256)
@pytest.mark.snippet("ihs/apache/check-session-resumption.sh", checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_session_resumption_with_the_two_key_profiles_lists_checks_each_certificate(fresh_host):
    """The site profile's two lists ("rsa_pss_rsae_sha256 ECDSA+SHA256") are two clients, not one -sigalgs: each is
    checked over TLS 1.2 and 1.3 (before, both went into one list and every correct two-key site failed)."""
    ca = serve_token_ecdsa(fresh_host)
    r = fresh_host.run(f"CA_FILE={ca} SIGALGS={shlex.quote(BOTH_KEYS)} "
                       f"bash {snippet_path('ihs/apache/check-session-resumption.sh')} localhost:443 www.example.com")
    assert r.rc == 0, r.stdout + r.stderr
    for offer in BOTH_KEYS.split():
        for proto in ("TLSv1.2", "TLSv1.3"):
            said = rf"^{proto} \({re.escape(offer)}\): [1-9]\d* of 4 reconnections resumed"
            assert re.search(said, r.stdout, re.M), r.stdout


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet("ihs/apache/create-token-key-and-csr.sh", checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_ecdsa_key_step_says_why_the_ica_token_makes_no_p256_key_without_cpacf_ecc(fresh_host):
    """Under qemu there is no CPACF ECC (MSA 9) and no CCA card: libica refuses the curve (EPERM), the ICA token
    answers CKR_CURVE_NOT_SUPPORTED, and the step says what that means instead of p11sak's code."""
    r = ecdsa_key_step(fresh_host)
    assert r.rc == 1, r.stdout + r.stderr
    assert "cannot make a P-256 key on this machine" in r.stderr
    assert "IBM z15 and later" in r.stderr
    assert fresh_host.run("test -e /etc/ssl/www.example.com-ecdsa.csr").rc == 1


def scan_token_ecdsa(host, tmp_path):
    ca = serve_token_ecdsa(host)
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(host.file(ca).content_string)
    return sslyze(host, ca_file, tmp_path)


def served_key_types(scan) -> set[tuple[str, int]]:
    """(key algorithm, size) of each certificate deployment sslyze found."""
    info = scan["server_scan_results"][0]["scan_result"]["certificate_info"]["result"]
    return {(d["received_certificate_chain"][0]["public_key"]["algorithm"],
             d["received_certificate_chain"][0]["public_key"]["key_size"])
            for d in info["certificate_deployments"]}


@pytest.mark.parametrize("published_host", ["debian13-amd64"], indirect=True)
@pytest.mark.snippet(*ECDSA_SNIPPETS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_tls_policy_scan_finds_both_token_certificates_compliant_with_mozilla_intermediate(published_host, tmp_path):
    proc, scan = scan_token_ecdsa(published_host, tmp_path)
    assert scan is not None, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert f"www.example.com:{published_host.zr_port}: OK - Compliant." in proc.stdout, proc.stdout[-3000:]
    errors = published_host.run("tail -20 /var/log/apache2/error.log").stdout
    assert served_key_types(scan) == {("ECPublicKey", 256), ("RSAPublicKey", 2048)}, errors


@pytest.mark.negative("ihs/apache/apache-tls-pkcs11-ecdsa.conf",
                      expects="the policy scan fails on a P-521 certificate: FAILED - Not compliant, secp521r1")
@pytest.mark.parametrize("published_host", ["debian13-amd64"], indirect=True)
@pytest.mark.snippet(ECDSA_SITE, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_tls_policy_scan_rejects_an_ecdsa_certificate_on_p521(published_host, tmp_path):
    """Negative case: the same site with a P-521 certificate, a curve Mozilla's intermediate profile leaves out."""
    ca = serve_token_ecdsa(published_host)
    ecdsa_key_in_a_file(published_host, "P-521")
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(published_host.file(ca).content_string)
    proc, scan = sslyze(published_host, ca_file, tmp_path)
    assert scan is not None, proc.stdout + proc.stderr
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "FAILED - Not compliant." in proc.stdout, proc.stdout[-3000:]
    assert "secp521r1" in proc.stdout, proc.stdout[-3000:]
