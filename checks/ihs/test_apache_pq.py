"""Post-quantum key exchange on the Apache sites: the hybrid group first where OpenSSL knows it.

The sites' Groups line (read from the snippets, zrunbook/ihs/tls_groups.py) puts X25519MLKEM768 first. On the
container hosts (Debian 13, OpenSSL 3.5) a client offering the hybrid group negotiates it with the token site and
the OpenSSL site, a client offering only X25519 still connects, and the negative case: the same site with the line
for older OpenSSL (groups-before-openssl-3.5.conf) gives a hybrid-capable client X25519, not the hybrid group.
On this machine, the real OpenSSL decides whether the sites' line is accepted: refused below 3.5 (httpd would
not start), accepted from 3.5, which is why the page gives the second line for older OpenSSL.
"""

from __future__ import annotations

import subprocess

import pytest

from checks.hosts.apache import QEMU_SIGALGS, TOKEN_KEY, handshake, negotiated_group, serve_files, serve_token
from checks.hosts.steps import arch
from zrunbook import SNIPPETS
from zrunbook.ihs.tls_groups import BEFORE_3_5, HYBRID, SITES, groups_line, needs_openssl, site_groups, version

OPENSSL_SITE, TOKEN_SITE = SITES[0], SITES[1]
TOKEN_SNIPPETS = (TOKEN_SITE, "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf",
                  "ihs/apache/create-token-key-and-csr.sh", "ihs/apache/set-httpd-openssl-conf.sh")
SITE_FILE = "/etc/apache2/sites-available/tls.conf"  # where the walk and the checks install a site
HYBRID_CLIENT = f"{HYBRID}:X25519"  # what a current OpenSSL 3.5 client offers first (its default's first two)


def connect(host, ca: str, groups: str):
    sig = ("-sigalgs", QEMU_SIGALGS) if arch(host) == "s390x" else ()  # qemu's ICA token has no SHA-256
    return handshake(host, ca, "-tls1_3", "-groups", groups, *sig)


def directive_line(path: str) -> str:
    return next(line for line in (SNIPPETS / path).read_text(encoding="utf-8").splitlines()
                if "SSLOpenSSLConfCmd Groups" in line)


def use_line_before_3_5(host) -> None:
    """The site's Groups line replaced by the one for older OpenSSL, exactly as that snippet gives it; restarted."""
    old, new = directive_line(TOKEN_SITE).strip(), directive_line(BEFORE_3_5).strip()
    host.run_expect([0], f"sed -i 's|^ *{old}$|    {new}|' {SITE_FILE} && grep -qx '    {new}' {SITE_FILE}"
                         " && apache2ctl -t && apache2ctl stop && sleep 1 && apache2ctl start && sleep 2")


@pytest.mark.uses("ihs/apache/apache-tls-openssl.conf", "ihs/apache/apache-tls-pkcs11-ecdsa.conf",
                  "ihs/apache/apache-tls-pkcs11.conf", "ihs/apache/groups-before-openssl-3.5.conf",
                  "webseal/apache/apache-ssl-junction.conf")
def test_every_apache_site_offers_the_hybrid_group_first():
    for site in SITES:
        assert site_groups(site)[0] == HYBRID, site
    assert HYBRID not in site_groups(BEFORE_3_5)
    assert site_groups(BEFORE_3_5) == site_groups(OPENSSL_SITE)[1:]  # the same classical groups, in the same order


def openssl_accepts(groups: str) -> subprocess.CompletedProcess:
    """This machine's OpenSSL parses the list as mod_ssl's SSLOpenSSLConfCmd does (SSL_CONF_cmd), then tries a
    closed port: a refused list stops before connecting."""
    return subprocess.run(["openssl", "s_client", "-groups", groups, "-connect", "127.0.0.1:9"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)


@pytest.mark.uses("ihs/apache/apache-tls-openssl.conf", "ihs/apache/groups-before-openssl-3.5.conf")
def test_this_machines_openssl_accepts_the_sites_groups_only_from_3_5():
    """The real OpenSSL here (3.0 on the Debian 12 build machines, 3.5 on a Debian 13 one) decides: below the version
    tls_groups says the sites' line needs, it refuses the line; the line for older OpenSSL is accepted by all."""
    local = version(subprocess.run(["openssl", "version"], capture_output=True, text=True, check=True).stdout)
    assert local is not None
    site = openssl_accepts(groups_line(OPENSSL_SITE))
    refused = "SSL_CONF_cmd(-groups" in site.stdout + site.stderr
    assert refused == (local < needs_openssl(groups_line(OPENSSL_SITE))), site.stdout + site.stderr
    older = openssl_accepts(groups_line(BEFORE_3_5))
    assert "SSL_CONF_cmd(-groups" not in older.stdout + older.stderr


@pytest.mark.arch_dependent("the site's key is in the ICA token on s390x")
@pytest.mark.snippet(*TOKEN_SNIPPETS, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_token_site_negotiates_the_hybrid_group_and_still_serves_classical_clients(fresh_host):
    ca = serve_token(fresh_host)
    hybrid = connect(fresh_host, ca, HYBRID_CLIENT)
    assert hybrid.rc == 0, hybrid.stdout
    assert negotiated_group(hybrid.stdout) == HYBRID
    classical = connect(fresh_host, ca, "X25519")
    assert classical.rc == 0, classical.stdout
    assert negotiated_group(classical.stdout) == "X25519"


@pytest.mark.snippet(TOKEN_SITE, BEFORE_3_5, checker="apache-tls")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_line_for_older_openssl_gives_a_hybrid_client_only_x25519(fresh_host):
    """Negative case: the classical line (the sites' line before this change) does not negotiate the hybrid group,
    although server and client both know it; the handshake itself still succeeds."""
    ca = serve_token(fresh_host)
    use_line_before_3_5(fresh_host)
    r = connect(fresh_host, ca, HYBRID_CLIENT)
    assert r.rc == 0, r.stdout
    assert negotiated_group(r.stdout) == "X25519"


@pytest.mark.snippet(OPENSSL_SITE, checker="apache-tls")
def test_openssl_site_negotiates_the_hybrid_group_and_still_serves_classical_clients(fresh_host):
    ca = serve_files(fresh_host)
    hybrid = handshake(fresh_host, ca, "-tls1_3", "-groups", HYBRID_CLIENT)
    assert hybrid.rc == 0, hybrid.stdout
    assert negotiated_group(hybrid.stdout) == HYBRID
    for group in ("X25519", "secp256r1"):
        r = handshake(fresh_host, ca, "-groups", group)
        assert r.rc == 0, r.stdout
        assert negotiated_group(r.stdout) == group
