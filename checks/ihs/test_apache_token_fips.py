"""The Apache token site in FIPS mode (the token page's last section): OpenSSL's FIPS provider with pkcs11-provider.

On a host with the token site (TOKEN_KEY), the crypto chapter's FIPS step writes the module configuration, the
page's configuration for FIPS mode is installed (with the host's library triplet on amd64, zrunbook/ihs/
distro_paths.py), httpd is given it and restarted, and the page's check proves the outcome: the fips and pkcs11
providers active and the default one not, the token's key signs under the FIPS provider, MD5 refused. httpd then
serves a TLS 1.3 handshake with the key in the token. The site's key is the page's FIPS key, RSA 4096 on
openCryptoki 3.23 (fips_key).
Negative cases: the token page's ordinary configuration (no FIPS provider), the FIPS configuration without
pkcs11-module-assume-fips (the token key cannot be used), and the ordinary RSA 2048 key (libica 4.4.2 in FIPS mode
refuses it).
"""

from __future__ import annotations

import re

import pytest

from checks.hosts.apache import (
    CA,
    OPENSSL_PKCS11_CONF,
    QEMU_SIGALGS,
    TOKEN_KEY,
    handshake,
    negotiated_group,
    serve_token,
    start,
)
from checks.hosts.steps import arch, run_snippet, snippet_path
from checks.hosts.token import token_env
from checks.hosts.util import copy_to, output
from zrunbook import SNIPPETS
from zrunbook.ihs.distro_paths import library, module_path, on_host, openssl_config

FIPS_CONF = "ihs/apache/openssl-pkcs11-provider-fips-ubuntu-debian.conf"
CHECK = "ihs/apache/check-token-fips.sh"
KEY_STEP = "ihs/apache/create-token-key-and-csr.sh"
ENABLE_FIPS = "crypto/fips/enable-openssl-fips-provider.sh"
FIPS_CONF_PATH = "/etc/ssl/openssl-pkcs11-fips.conf"  # where the page saves it
SITE_FILE = "/etc/apache2/sites-available/tls.conf"


def install_fips_conf(host, text: str, path: str = FIPS_CONF_PATH) -> None:
    r = run_snippet(host, ENABLE_FIPS)
    assert r.rc == 0, output(r)
    copy_to(host, on_host(host, text), path)


def check(host, conf: str):
    return host.run(f"bash {snippet_path(CHECK)} {conf} {SITE_FILE}")


def fips_text() -> str:
    return (SNIPPETS / FIPS_CONF).read_text(encoding="utf-8")


FIPS_LABEL = "apachekey-4096"
FIPS_CSR, FIPS_CERT = "/etc/ssl/www.example.com-4096.csr", "/etc/ssl/certs/www.example.com-4096.crt"


def fips_key(host) -> None:
    """The page's FIPS key on openCryptoki 3.23: the key step with RSA_BITS=4096 under its own label (libica 4.4.2
    in FIPS mode refuses RSA below 3072 bits, and p11sak makes 3072 only from 3.26), the test CA's certificate for
    it, and the site pointed at both."""
    made = host.run(f"{token_env()} RSA_BITS=4096 KEY_LABEL={FIPS_LABEL} CSR={FIPS_CSR} "
                    f"bash {snippet_path(KEY_STEP)}")
    assert made.rc == 0, output(made)
    assert "generated RSA 4096 key pair" in made.stdout, output(made)
    host.run_expect([0], f"CA_DIR={CA} bash {snippet_path('ihs/apache/test-ca.sh')} sign {FIPS_CSR} {FIPS_CERT}")
    host.run_expect([0], f"sed -i -e 's#^\\( *SSLCertificateFile \\).*#\\1{FIPS_CERT}#'"
                         f" -e 's#object=apachekey;#object={FIPS_LABEL};#' {SITE_FILE}")


def serve_in_fips_mode(host) -> str:
    """httpd's OPENSSL_CONF moved to the FIPS configuration (the page's envvars line with the new path), restarted."""
    envvars, line = "/etc/apache2/envvars", f"export OPENSSL_CONF={FIPS_CONF_PATH}"
    host.run_expect([0], f"sed -i 's|^export OPENSSL_CONF={OPENSSL_PKCS11_CONF}$|{line}|' {envvars}"
                         f" && grep -qx '{line}' {envvars} && apache2ctl stop && sleep 1")
    started = host.run("apache2ctl start")
    assert started.rc == 0, output(started) + host.run("tail -20 /var/log/apache2/error.log").stdout
    start(host)
    pid = host.check_output("cat /run/apache2/apache2.pid")
    assert f"OPENSSL_CONF={FIPS_CONF_PATH}" in host.check_output(f"tr '\\0' '\\n' < /proc/{pid}/environ")
    return pid


@pytest.mark.negative("ihs/apache/openssl-pkcs11-provider-fips-ubuntu-debian.conf",
                      expects="MD5 is refused under the FIPS configuration")
@pytest.mark.arch_dependent("the FIPS provider's s390x build and the ICA token")
@pytest.mark.snippet(FIPS_CONF, CHECK, ENABLE_FIPS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_token_site_in_fips_mode_signs_in_the_token_and_refuses_md5(fresh_host):
    ca = serve_token(fresh_host)
    fips_key(fresh_host)
    install_fips_conf(fresh_host, fips_text())
    r = check(fresh_host, FIPS_CONF_PATH)
    assert r.rc == 0, output(r)
    assert re.search(r"FIPS provider 3\.5\.\S+ and pkcs11-provider active \(active: [a-z0-9 ]+\); MD5 refused\.",
                     r.stdout), r.stdout
    assert "default" not in re.search(r"\(active: ([a-z0-9 ]+)\)", r.stdout).group(1)
    assert f"signed in the token under FIPS: pkcs11:token=IBMICATOK;object={FIPS_LABEL};type=private" in r.stdout
    serve_in_fips_mode(fresh_host)
    sig = ("-sigalgs", QEMU_SIGALGS) if arch(fresh_host) == "s390x" else ()
    groups = {}
    for offered in ("X25519MLKEM768:X25519", "X25519", "secp256r1"):
        tls = handshake(fresh_host, ca, "-tls1_3", "-groups", offered, *sig)
        groups[offered] = negotiated_group(tls.stdout) if tls.rc == 0 else "refused"
    # the FIPS provider has the hybrid group and the NIST curves, not X25519 alone: the site's "?X25519" is skipped
    assert groups == {"X25519MLKEM768:X25519": "X25519MLKEM768", "X25519": "refused", "secp256r1": "secp256r1"}


@pytest.mark.negative("ihs/apache/check-token-fips.sh", expects="the check fails with the ordinary token configuration")
@pytest.mark.snippet(CHECK, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_fips_token_check_fails_with_the_ordinary_token_configuration(fresh_host):
    serve_token(fresh_host)
    r = check(fresh_host, OPENSSL_PKCS11_CONF)
    assert r.rc == 1, output(r)
    assert "the fips provider is not active" in r.stderr


@pytest.mark.negative("ihs/apache/check-token-fips.sh", expects="the check fails without assume-fips")
@pytest.mark.snippet(FIPS_CONF, CHECK, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_fips_token_check_fails_without_assume_fips(fresh_host):
    """Without pkcs11-module-assume-fips pkcs11-provider offers nothing to fips=yes queries: the token key
    cannot be used, and the check says so."""
    serve_token(fresh_host)
    fips_key(fresh_host)
    text = fips_text()
    assert "pkcs11-module-assume-fips = true\n" in text
    install_fips_conf(fresh_host, text.replace("pkcs11-module-assume-fips = true\n", ""), "/tmp/no-assume.conf")
    r = check(fresh_host, "/tmp/no-assume.conf")
    assert r.rc == 1, output(r)
    assert "did not sign" in r.stderr


@pytest.mark.negative("ihs/apache/check-token-fips.sh",
                      expects="the check fails for the RSA 2048 key libica refuses in FIPS mode")
@pytest.mark.snippet(CHECK, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_fips_token_check_fails_for_the_rsa_2048_key_libica_refuses_in_fips_mode(fresh_host):
    """The token page's ordinary key (RSA 2048) under the FIPS configuration: the check names its size, which libica
    4.4.2 in FIPS mode refuses (the hosts' libica 4.4.1 and the soft token would still sign: checked as written)."""
    serve_token(fresh_host)
    install_fips_conf(fresh_host, fips_text())
    r = check(fresh_host, FIPS_CONF_PATH)
    assert r.rc == 1, output(r)
    assert "is RSA 2048: libica 4.4.2 and later refuse RSA below 3072 bits in FIPS mode" in r.stderr, output(r)


@pytest.mark.snippet(KEY_STEP, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_key_step_says_that_p11sak_3_23_makes_no_rsa_3072_key(fresh_host):
    """The size FIPS needs at least, 3072, is not in p11sak's list before openCryptoki 3.26 (p11sak.c's
    p11sak_rsa_keybits in 3.23.0): the step stops with the size to use instead, before anything is made."""
    r = fresh_host.run(f"{token_env()} RSA_BITS=3072 KEY_LABEL=apachekey-3072 CSR=/tmp/x.csr "
                       f"bash {snippet_path(KEY_STEP)}")
    assert r.rc == 2, output(r)
    assert "makes RSA keys of 512, 1024, 2048 or 4096 bits only (3072 from openCryptoki 3.26)" in r.stderr, output(r)
    assert fresh_host.run("test -e /tmp/x.csr").rc == 1


@pytest.mark.only_hosts("debian13-amd64", why="it checks the sentence that names the x86_64 library folder")
@pytest.mark.snippet(FIPS_CONF, CHECK, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_fips_token_check_names_the_library_path_when_the_edit_was_forgotten(fresh_host):
    """The FIPS file as shipped names IBM Z's library folder; on amd64 without the page's edit OpenSSL says only
    'pkeyutl: Error loading key'. The check names the path and this machine's."""
    serve_token(fresh_host)
    run_snippet(fresh_host, ENABLE_FIPS)
    copy_to(fresh_host, fips_text(), "/tmp/as-shipped.conf")  # byte for byte: s390x's folder
    r = check(fresh_host, "/tmp/as-shipped.conf")
    assert r.rc == 1, output(r)
    assert ("names the token library /usr/lib/s390x-linux-gnu/pkcs11/libopencryptoki.so, which does not exist here; "
            "on this x86_64 machine it is /usr/lib/x86_64-linux-gnu/pkcs11/libopencryptoki.so") in r.stderr, output(r)


RHEL_FIPS_CONF = "ihs/apache/openssl-pkcs11-provider-fips-rhel-sles.conf"
RHEL_CONF = "ihs/apache/openssl-pkcs11-provider-rhel-sles.conf"
# A stand-in for what RHEL's FIPS mode gives every OpenSSL program: the FIPS provider loaded and fips=yes the
# default property, beside the default provider of RHEL's openssl.cnf. The RHEL files include this path first.
RHEL_FIPS_MODE = """openssl_conf = openssl_init
.include /etc/ssl/fipsmodule.cnf
[openssl_init]
providers = provider_sect
alg_section = algorithm_sect
[provider_sect]
default = default_sect
fips = fips_sect
base = base_sect
[default_sect]
activate = 1
[base_sect]
activate = 1
[algorithm_sect]
default_properties = fips=yes
"""


def rhel_on_debian(host, snippet: str) -> str:
    """A RHEL configuration as the Debian host can read it: only the library path replaced by the host's."""
    text = (SNIPPETS / snippet).read_text(encoding="utf-8")
    here = module_path(on_host(host, openssl_config("ubuntu-debian")))
    assert f"pkcs11-module-path = {library('rhel-sles')}\n" in text
    return text.replace(library("rhel-sles"), here)


def sign_with(host, conf: str):
    """The token site's key signs a digest with OpenSSL configuration conf (testinfra's CommandResult)."""
    key = host.check_output(f"awk '$1 == \"SSLCertificateKeyFile\" {{ gsub(/\"/, \"\", $2); print $2 }}' {SITE_FILE}")
    return host.run(f"echo zr | openssl dgst -sha256 -binary > /tmp/d && OPENSSL_CONF={conf} openssl pkeyutl "
                    f"-sign -inkey '{key}' -pkeyopt digest:sha256 -in /tmp/d -out /tmp/sig")


def sign_in_rhel_fips_mode(host, snippet: str):
    """sign_with the RHEL configuration under the stand-in for RHEL's FIPS mode."""
    r = run_snippet(host, ENABLE_FIPS)
    assert r.rc == 0, output(r)
    host.run_expect([0], "mkdir -p /etc/pki/tls")
    copy_to(host, RHEL_FIPS_MODE, "/etc/pki/tls/openssl.cnf")
    copy_to(host, rhel_on_debian(host, snippet), "/tmp/rhel.conf")
    mode = host.run("OPENSSL_CONF=/tmp/rhel.conf openssl dgst -md5 </dev/null")
    assert mode.rc != 0, "the stand-in did not make fips=yes the default: " + output(mode)
    return sign_with(host, "/tmp/rhel.conf")


@pytest.mark.only_hosts("debian13-amd64", why="the stand-in for RHEL's FIPS mode tests a property query, not the CPU")
@pytest.mark.snippet(RHEL_FIPS_CONF, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
def test_rhel_fips_configuration_lets_the_token_key_sign_where_fips_yes_is_the_default(fresh_host):
    """M-1: RHEL's FIPS mode makes fips=yes the default; the page's RHEL FIPS file keeps assume-fips, so the token
    key still signs. Outside FIPS mode (no stand-in) the same file signs too: it can be installed before the switch."""
    serve_token(fresh_host)
    copy_to(fresh_host, rhel_on_debian(fresh_host, RHEL_FIPS_CONF), "/tmp/rhel.conf")
    before = sign_with(fresh_host, "/tmp/rhel.conf")
    assert before.rc == 0, output(before)
    r = sign_in_rhel_fips_mode(fresh_host, RHEL_FIPS_CONF)
    assert r.rc == 0, output(r)


@pytest.mark.negative(
    "ihs/apache/openssl-pkcs11-provider-rhel-sles.conf",
    expects="step 2's RHEL file (no assume-fips) cannot use the token key once fips=yes "
            "is the default, as the page's old instruction 'keep step 2's file' did")
@pytest.mark.only_hosts("debian13-amd64", why="the stand-in for RHEL's FIPS mode tests a property query, not the CPU")
@pytest.mark.snippet(RHEL_CONF, RHEL_FIPS_CONF, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
def test_step_2s_rhel_configuration_cannot_use_the_token_key_where_fips_yes_is_the_default(fresh_host):
    serve_token(fresh_host)
    r = sign_in_rhel_fips_mode(fresh_host, RHEL_CONF)
    assert r.rc != 0, output(r)


@pytest.mark.snippet(RHEL_FIPS_CONF, RHEL_CONF, checker="pkcs11-library-paths")
def test_the_rhel_fips_file_is_step_2s_rhel_file_plus_assume_fips():
    """Nothing else differs (comments aside), so the FIPS file cannot drift from step 2's."""
    def settings(snippet):
        return [line for line in (SNIPPETS / snippet).read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.startswith("#")]
    fips, plain = settings(RHEL_FIPS_CONF), settings(RHEL_CONF)
    assert [line for line in fips if line not in plain] == ["pkcs11-module-assume-fips = true"]
    assert [line for line in fips if line != "pkcs11-module-assume-fips = true"] == plain
