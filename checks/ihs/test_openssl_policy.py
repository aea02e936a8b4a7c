"""The runbook's OpenSSL configurations for httpd (OPENSSL_CONF) keep the distribution's TLS policy (issue 16,
finding 5): each includes the system openssl.cnf first, then adds its providers.

Debian 13's openssl.cnf sets no policy of its own, so the test gives the host one, written the way Ubuntu's
(system_default) and RHEL's (ssl_conf, crypto-policies) files apply theirs: MinProtocol TLSv1.3, distinct from
OpenSSL's built-in default. Then, with OPENSSL_CONF pointing at the runbook's file, the providers are active
AND an `openssl s_server` refuses a TLS 1.2 client. The negative case is the runbook's file as it was before
this fix (its own `openssl_conf` line, no include): the providers load, and TLS 1.2 is accepted.
"""

import itertools
import re
import shlex

import pytest

from checks.hosts.util import copy_to, output
from zrunbook import SNIPPETS
from zrunbook.ihs.distro_paths import module_path, on_host

PKCS11_DEBIAN = "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf"
PKCS11_RHEL = "ihs/apache/openssl-pkcs11-provider-rhel-sles.conf"
IBMCA = "crypto/libraries/openssl-ibmca-provider.conf"
POLICY = "\n[zr_policy_ssl]\nsystem_default = zr_policy_default\n\n[zr_policy_default]\nMinProtocol = TLSv1.3\n"
INCLUDE = re.compile(r"^\.include\b.*\n", re.M)
_SERVERS = itertools.count()


def give_system_policy(host) -> None:
    host.run_expect([0], "grep -q zr_policy_ssl /etc/ssl/openssl.cnf || { sed -i "
                    "'s/^\\[openssl_init\\]$/[openssl_init]\\nssl_conf = zr_policy_ssl/' /etc/ssl/openssl.cnf && "
                    f"printf %s {shlex.quote(POLICY)} >> /etc/ssl/openssl.cnf; }}")


def install(host, rel: str, without_include: bool = False) -> str:
    text = on_host(host, (SNIPPETS / rel).read_text(encoding="utf-8"))
    if without_include:  # the file as it was before the fix: its own openssl_conf line, no include
        text = INCLUDE.sub("", text).replace("\n[openssl_init]", "openssl_conf = openssl_init\n\n[openssl_init]", 1)
    if "pkcs11-module-path" in text:  # the library the file names, linked to the host's where it lacks it
        pin = re.search(r"^pkcs11-module-token-pin = file:(\S+)$", text, re.M).group(1)
        host.run_expect([0], f"mkdir -p $(dirname {pin}) && test -f {pin} || echo 0000 > {pin}")  # the page's PIN file
        lib = module_path(text)
        real = host.check_output("readlink -f /usr/lib/$(uname -m)-linux-gnu/opencryptoki/libopencryptoki.so.0")
        host.run_expect([0], f"test -e {lib} || {{ mkdir -p $(dirname {lib}) && ln -s {real} {lib}; }}")
    path = f"/tmp/policy-{rel.rsplit('/', 1)[1]}{'.noinclude' if without_include else ''}"
    copy_to(host, text, path)
    return path


def active_providers(host, conf: str) -> set[str]:
    listing = host.run(f"OPENSSL_CONF={conf} openssl list -providers -verbose")
    assert listing.rc == 0, output(listing)
    names, name = set(), None
    for line in listing.stdout.splitlines():
        if re.match(r"^  \S", line):
            name = line.strip()
        elif name and line.strip() == "status: active":
            names.add(name)
    return names


def server_accepts_tls12(host, conf: str) -> bool:
    """An openssl s_server started with OPENSSL_CONF=conf, and a client with no policy asking for TLS 1.2."""
    host.run_expect([0], "test -f /tmp/policy-key.pem || openssl req -x509 -newkey rsa:2048 -nodes "
                    "-keyout /tmp/policy-key.pem -out /tmp/policy-cert.pem -subj /CN=localhost -days 1 2>/dev/null")
    # a log of its own, removed first: the wait must not find an earlier server's ACCEPT before the shell has
    # truncated the file for this one (the client would then meet no server)
    log = f"/tmp/policy-server-{next(_SERVERS)}.log"
    host.run_expect([0], f"rm -f {log} && OPENSSL_CONF={conf} nohup timeout 60 openssl s_server -accept "
                    "127.0.0.1:14433 -cert /tmp/policy-cert.pem -key /tmp/policy-key.pem -www -naccept 1 "
                    f">{log} 2>&1 &")
    host.run_expect([0], f"for i in $(seq 300); do grep -qs ACCEPT {log} && exit 0; sleep 0.2; done; cat {log}; exit 1")
    client = host.run("echo | OPENSSL_CONF=/dev/null openssl s_client -connect 127.0.0.1:14433 -tls1_2 2>&1")
    host.run("pkill -f 'openssl s_server -accept 127.0.0.1:14433' || true")
    assert "Connection refused" not in client.stdout, client.stdout  # no server answered: no verdict
    return "New, TLSv1.2, Cipher is " in client.stdout  # a refused client still prints "Protocol: TLSv1.2"


@pytest.mark.arch_dependent("the configurations name the architecture's module path")
@pytest.mark.parametrize("rel", [PKCS11_DEBIAN, PKCS11_RHEL])
@pytest.mark.snippet(PKCS11_DEBIAN, PKCS11_RHEL, checker="testinfra")
def test_pkcs11_provider_config_keeps_the_system_policy(fresh_host, rel):
    give_system_policy(fresh_host)
    conf = install(fresh_host, rel)
    assert {"default", "pkcs11"} <= active_providers(fresh_host, conf)
    assert not server_accepts_tls12(fresh_host, conf), "the system's MinProtocol TLSv1.3 did not apply"


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(IBMCA, checker="testinfra")
def test_ibmca_provider_config_keeps_the_system_policy(fresh_host):
    give_system_policy(fresh_host)
    conf = install(fresh_host, IBMCA)
    assert {"default", "ibmca"} <= active_providers(fresh_host, conf)
    assert not server_accepts_tls12(fresh_host, conf), "the system's MinProtocol TLSv1.3 did not apply"


@pytest.mark.snippet(PKCS11_DEBIAN, checker="testinfra")
def test_without_the_include_the_system_policy_is_lost(fresh_host):
    give_system_policy(fresh_host)
    conf = install(fresh_host, PKCS11_DEBIAN, without_include=True)
    assert {"default", "pkcs11"} <= active_providers(fresh_host, conf)
    assert server_accepts_tls12(fresh_host, conf)
    # and the system file itself refuses it, so the policy is real
    assert not server_accepts_tls12(fresh_host, "/etc/ssl/openssl.cnf")


@pytest.mark.snippet(PKCS11_RHEL, checker="testinfra")
def test_where_both_system_files_exist_the_rhel_sles_config_reads_them_and_keeps_the_policy(fresh_host):
    """The RHEL/SLES file includes /etc/pki/tls/openssl.cnf and then /etc/ssl/openssl.cnf, for the one of them a
    host has. On a host with both (here the second a link to the first, as a compatibility link would make it) the
    same sections are read twice: the providers still load once each, and the policy still applies. The negative
    case is the file without its [default] line between the includes: the second file's first keys (HOME,
    openssl_conf, ...) land in the first file's last section, a TLS policy section, and no TLS context can be
    made."""
    give_system_policy(fresh_host)
    fresh_host.run_expect([0], "mkdir -p /etc/pki/tls && ln -sf /etc/ssl/openssl.cnf /etc/pki/tls/openssl.cnf")
    conf = install(fresh_host, PKCS11_RHEL)
    listing = fresh_host.run(f"OPENSSL_CONF={conf} openssl list -providers")
    assert listing.rc == 0, output(listing)
    assert listing.stdout.count("  pkcs11\n") == 1, listing.stdout
    assert {"default", "pkcs11"} <= active_providers(fresh_host, conf)
    assert not server_accepts_tls12(fresh_host, conf), "the system's MinProtocol TLSv1.3 did not apply"
    broken = install(fresh_host, PKCS11_RHEL).replace(".conf", ".nodefault.conf")
    fresh_host.run_expect([0], f"sed '/^\\[default\\]$/d' {conf} > {broken} && ! grep -q '^\\[default\\]' {broken}")
    server = fresh_host.run(f"OPENSSL_CONF={broken} timeout 20 openssl s_server -accept 127.0.0.1:14437 "
                            "-cert /tmp/policy-cert.pem -key /tmp/policy-key.pem -naccept 1 </dev/null 2>&1")
    assert server.rc != 0, output(server)
    assert "error in system default config" in server.stdout
    assert "cmd=openssl_conf" in server.stdout
