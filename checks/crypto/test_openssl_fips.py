"""OpenSSL's FIPS provider on the container hosts (docs/how-to/crypto/08-fips.md), Debian 13's openssl-provider-fips.

The page's enable step writes the module's configuration with openssl fipsinstall, the page's configuration
restricts OpenSSL to the fips provider, and its outcome check proves that OpenSSL then answers only from that
provider, run as httpd's user as a service would. Negative cases: no FIPS configuration, the fips provider beside
the default one, a fipsmodule.cnf whose MAC does not match the module (the provider then refuses to load), and
an enable step on a system without the module.
"""

import pytest

from checks.hosts.engine import REPO
from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import copy_to, output

INSTALL = "crypto/fips/install-openssl-fips-debian.sh"
ENABLE = "crypto/fips/enable-openssl-fips-provider.sh"
CONF = "crypto/fips/openssl-fips.cnf"
CHECK = "crypto/fips/check-openssl-fips.sh"
BESIDE_DEFAULT = "checks/crypto/bad/fips/openssl-fips-beside-default.cnf"
FIPS_CONF = "/etc/ssl/openssl-fips.cnf"  # where the page saves it


def enable(host) -> None:
    """The page's steps: the package (installed in the image: the step resolves offline), fipsinstall, the
    configuration saved where the page says."""
    r = run_snippet(host, INSTALL)
    assert r.rc == 0, output(r)
    r = run_snippet(host, ENABLE)
    assert r.rc == 0, output(r)
    host.run_expect([0], f"install -m 0644 {snippet_path(CONF)} {FIPS_CONF}")


def check(host, conf: str | None):
    """The page's check as httpd's user, given the configuration as the page runs it (none: the system's)."""
    return host.run(f"runuser -u www-data -- bash {snippet_path(CHECK)} {conf or ''}")


@pytest.mark.arch_dependent("the FIPS provider's s390x build uses CPACF code paths")
@pytest.mark.snippet(INSTALL, ENABLE, CONF, CHECK, checker="testinfra")
def test_with_the_fips_configuration_openssl_answers_only_from_the_fips_provider(fresh_host):
    enable(fresh_host)
    r = check(fresh_host, FIPS_CONF)
    assert r.rc == 0, output(r)
    assert "answers from the FIPS provider 3.5" in r.stdout
    assert "(active: base fips)" in r.stdout
    assert "Refused: MD5 ChaCha20 RSA-1024 key generation." in r.stdout
    assert fresh_host.file("/etc/ssl/fipsmodule.cnf").contains("^module-mac = ")


@pytest.mark.uses("crypto/fips/enable-openssl-fips-provider.sh", "crypto/fips/install-openssl-fips-debian.sh",
                  "crypto/fips/openssl-fips.cnf")
@pytest.mark.negative("crypto/fips/check-openssl-fips.sh",
                      expects="the check fails under the system's own OpenSSL configuration")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_fips_check_fails_with_the_system_configuration(fresh_host):
    enable(fresh_host)
    r = check(fresh_host, None)
    assert r.rc == 1, output(r)
    assert "the fips provider is not active with the system configuration (active: default)" in r.stderr


@pytest.mark.uses("crypto/fips/enable-openssl-fips-provider.sh", "crypto/fips/install-openssl-fips-debian.sh",
                  "crypto/fips/openssl-fips.cnf")
@pytest.mark.negative("crypto/fips/check-openssl-fips.sh",
                      expects="the check fails while the default provider is active beside the FIPS provider")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_fips_check_fails_when_the_default_provider_answers_beside_it(fresh_host):
    enable(fresh_host)
    copy_to(fresh_host, (REPO / BESIDE_DEFAULT).read_text(), "/tmp/beside.cnf")
    r = check(fresh_host, "/tmp/beside.cnf")
    assert r.rc == 1, output(r)
    assert "OpenSSL still offers what the FIPS provider does not" in r.stderr
    assert "(active providers: default fips)" in r.stderr


@pytest.mark.uses("crypto/fips/enable-openssl-fips-provider.sh", "crypto/fips/install-openssl-fips-debian.sh")
@pytest.mark.negative("crypto/fips/check-openssl-fips.sh",
                      expects="the check fails when the FIPS module's MAC does not match")
@pytest.mark.snippet(CHECK, CONF, checker="testinfra")
def test_fips_check_fails_when_the_module_mac_does_not_match(fresh_host):
    """A fipsmodule.cnf from another build of fips.so (here: its MAC altered): the provider's integrity check fails,
    it does not load, and nothing is served by it."""
    enable(fresh_host)
    fresh_host.run_expect([0], "sed -i 's/^module-mac = ../module-mac = 00/' /etc/ssl/fipsmodule.cnf")
    r = check(fresh_host, FIPS_CONF)
    assert r.rc == 1, output(r)
    assert "the fips provider is not active" in r.stderr
    assert "(active: base)" in r.stderr


@pytest.mark.only_hosts("debian13-amd64", why="it moves the FIPS module out of the x86_64 folder")
@pytest.mark.snippet(ENABLE, checker="testinfra")
def test_enable_step_says_what_to_install_when_the_module_is_missing(fresh_host):
    fresh_host.run_expect([0], "mv /usr/lib/x86_64-linux-gnu/ossl-modules/fips.so /tmp/")
    r = run_snippet(fresh_host, ENABLE)
    assert r.rc == 1, output(r)
    assert "install openssl-provider-fips" in r.stderr
    assert not fresh_host.file("/etc/ssl/fipsmodule.cnf").exists


@pytest.mark.only_hosts("debian13-s390x")
def test_debians_libica_is_built_without_fips_support(host):
    """The FIPS table's libica row: Debian's libica has no FIPS mode to switch on (icainfo says so)."""
    assert "No built-in FIPS support." in host.check_output("icainfo")


def refuses_tls12(host, conf: str, port: int) -> bool:
    """Whether an openssl s_server started with OPENSSL_CONF=conf refuses a client with no policy that asks for
    TLS 1.2 (the system's MinProtocol applied to the server). Each call on its own port: a server of an earlier
    call that has not let go of its port yet must not answer this one (it made a full run fail once), and its own
    log: with one log for all, the wait could find the previous server's ACCEPT before the shell had truncated the
    file for the new one, and the client then met no server (a full run failed so, under load)."""
    host.run_expect([0], "test -f /tmp/tls12.pem || openssl req -x509 -newkey rsa:2048 -nodes -keyout /tmp/tls12.pem"
                         " -out /tmp/tls12.crt -subj /CN=localhost -days 1 2>/dev/null")
    log = f"/tmp/tls12-{port}.log"  # its own log too: the loop below must not find an earlier server's ACCEPT
    host.run_expect([0], f"rm -f {log} && OPENSSL_CONF={conf} nohup timeout 60 openssl s_server -accept "
                         f"127.0.0.1:{port} -naccept 1 -cert /tmp/tls12.crt -key /tmp/tls12.pem -www >{log} 2>&1 &"
                         f" for i in $(seq 300); do grep -qs ACCEPT {log} && exit 0; sleep 0.2; done;"
                         f" cat {log}; exit 1")
    r = host.run(f"echo | OPENSSL_CONF=/dev/null openssl s_client -connect 127.0.0.1:{port} -tls1_2 2>&1")
    host.run(f"pkill -f 'openssl s_server -accept 127.0.0.1:{port}' || true")
    assert "Connection refused" not in r.stdout, r.stdout  # no server answered: no verdict
    return "New, TLSv1.2, Cipher is " not in r.stdout


@pytest.mark.uses("crypto/fips/check-openssl-fips.sh", "crypto/fips/enable-openssl-fips-provider.sh",
                  "crypto/fips/install-openssl-fips-debian.sh")
@pytest.mark.snippet(CONF, checker="testinfra")
def test_the_fips_configuration_keeps_the_systems_tls_policy(fresh_host):
    """The system's openssl.cnf is included first: a TLS policy set there (here TLS 1.3 at least, as a system_default
    section) applies under the FIPS configuration too, and the check still passes. Negative case: the same
    configuration without the include ignores that policy."""
    enable(fresh_host)
    # Debian 13's openssl.cnf sets no TLS policy: give it one the way Ubuntu's and RHEL's files apply theirs
    system = "/etc/ssl/openssl.cnf"
    fresh_host.run_expect([0], f"sed -i 's/^\\[openssl_init\\]$/[openssl_init]\\nssl_conf = zr_ssl/' {system} && printf"
                               " '\\n[zr_ssl]\\nsystem_default = zr_tls\\n\\n[zr_tls]\\nMinProtocol = TLSv1.3\\n'"
                               f" >> {system}")
    assert refuses_tls12(fresh_host, "/etc/ssl/openssl.cnf", 14434)  # the policy as the system applies it
    assert refuses_tls12(fresh_host, FIPS_CONF, 14435)
    r = check(fresh_host, FIPS_CONF)
    assert r.rc == 0, output(r)
    assert "(active: base fips)" in r.stdout
    text = fresh_host.file(FIPS_CONF).content_string
    assert ".include /etc/ssl/openssl.cnf\n" in text
    copy_to(fresh_host, text.replace(".include /etc/ssl/openssl.cnf\n", ""), "/tmp/no-include.cnf")
    assert not refuses_tls12(fresh_host, "/tmp/no-include.cnf", 14436)
