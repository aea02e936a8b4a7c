"""Apache httpd + mod_ssl on a container host, set up the way the IHS chapter's Apache pages say.

``serve_files(host, site)``: the page's test CA and a server certificate signed by it (key in a file), the
site snippet enabled and httpd started by the page's own site step. ``serve_token(host)``: the token form: the
crypto chapter's token made ready for httpd's user (checks/hosts/token.py), the key generated in the token
and the CSR written by this chapter's snippet, the certificate signed by the test CA, OPENSSL_CONF set with
this chapter's snippet, httpd started. Both return the test CA's path inside the container.
``serve_token_ecdsa(host)``: the same with the ECDSA P-256 key added to the token and the two-key site.
``handshake(host, *args)`` runs ``openssl s_client -brief`` inside the container; ``httpd_cpu_seconds(host)`` is the
CPU time httpd has used (the benches' denominator); ``negotiated_group(output)`` the key-exchange group s_client
reports.
``try_export(host, key_label)`` runs checks/hosts/token_export.py as httpd's user with the page's PIN file
(the attributes, the read, wrap and set-extractable attempts, as JSON); ``unwrapped_public_key(host, result)``
decrypts a successful wrap outside the token with openssl and returns the public key of what came out.

Test data (PINs) lives in checks/hosts/token.py, never in snippets/. The hosts are Debian, so the token
form installs the Ubuntu/Debian OpenSSL configuration (byte for byte on s390x, with the host's triplet on
amd64: zrunbook/ihs/distro_paths.py) and the key step finds Debian's openCryptoki library by itself.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
from pathlib import Path

from checks.hosts.steps import State, reads, snippet_path
from checks.hosts.token import LABEL, ready_token, token_env
from checks.hosts.util import copy_to, ok
from zrunbook import SNIPPETS
from zrunbook.ihs.distro_paths import on_host, openssl_config

CA = "/root/zr-test-ca"
OPENSSL_PKCS11_CONF = "/etc/ssl/openssl-pkcs11.conf"  # where the page saves the configuration
PIN_FILE = "/etc/ssl/private/apache-token.pin"  # where the page's key step writes it
EXPORT_SCRIPT = "/opt/zrunbook/token_export.py"
# Under qemu-user the ICA token cannot hash with SHA-256 (qemu emulates CPACF's SHA-512 only): on the s390x host a
# client of a token key offers SHA-512 signature schemes (openssl -sigalgs); on IBM Z the SHA-256 ones work too.
QEMU_SIGALGS = "rsa_pss_rsae_sha512:RSA+SHA512"
TEST_CA = "ihs/apache/test-ca.sh"  # the OpenSSL page's test CA
ENABLE_SITE = "ihs/apache/enable-tls-site-debian.sh"  # the OpenSSL page's site step


def put(host, path: str, text: str) -> None:
    ok(host, f"echo {base64.b64encode(text.encode()).decode()} | base64 -d > {shlex.quote(path)}")


@reads(TEST_CA)
def make_ca(host) -> str:
    """The page's test CA (its snippet), in CA."""
    ok(host, f"CA_DIR={CA} bash {snippet_path(TEST_CA)} ca")
    return f"{CA}/ca.crt"


@reads(TEST_CA)
def sign(host, csr: str) -> None:
    """The certificate for a request, signed by the test CA with the page's snippet."""
    ok(host, f"CA_DIR={CA} bash {snippet_path(TEST_CA)} sign {shlex.quote(csr)}")


def site_modules(site: str) -> list[str]:
    """The modules the site snippet's header says to enable ("a2enmod ssl headers http2;"), read, not copied."""
    m = re.search(r"a2enmod ([a-z0-9_ ]+)[;)]", (SNIPPETS / site).read_text(encoding="utf-8"))
    return m.group(1).split() if m else ["ssl"]


def enable_site(host, site: str) -> None:
    ok(host, f"cp {snippet_path(site)} /etc/apache2/sites-available/tls.conf"
              f" && a2enmod -q {' '.join(site_modules(site))} && a2ensite -q tls")
    conf = "/etc/apache2/apache2.conf"
    ok(host, f"grep -q '^ServerName' {conf} || echo 'ServerName localhost' >> {conf}")


@reads(ENABLE_SITE)
def start(host) -> None:
    """The page's site step (enable-tls-site-debian.sh: modules, site, apachectl -t, stop and start), then wait
    until httpd listens."""
    ok(host, f"bash {snippet_path(ENABLE_SITE)} 2>&1")
    for _ in range(50):
        if host.run("ss -Hltn 'sport = :443' | grep -q 443").rc == 0:
            return
        host.run("sleep 0.2")
    raise AssertionError("httpd did not listen on 443:\n" + host.run("tail -20 /var/log/apache2/error.log").stdout)


@reads("ihs/apache/use-prefork-mpm-debian.sh")
def use_prefork(host) -> None:
    """The page's MPM step for first users, then the site step again (httpd picks its MPM only at a full start)."""
    ok(host, f"bash {snippet_path('ihs/apache/use-prefork-mpm-debian.sh')}")
    start(host)
    assert "prefork" in ok(host, "apache2ctl -V | grep 'Server MPM'")


def graceful(host) -> None:
    """apachectl graceful, then wait until httpd says the new generation runs (its error log's 'resuming normal
    operations' line), so that the next handshakes reach new workers. A wait for a state httpd reports, not a fixed
    sleep."""
    done = "grep -c 'resuming normal operations' /var/log/apache2/error.log"
    before = int(ok(host, done).strip())
    ok(host, f"apache2ctl graceful && for i in $(seq 100); do [ $({done}) -gt {before} ] && exit 0; sleep 0.1; done;"
             " echo 'no new generation after 10 s' >&2; exit 1")


@reads(TEST_CA, "ihs/apache/apache-tls-openssl.conf")
def serve_files(host, site: str = "ihs/apache/apache-tls-openssl.conf") -> str:
    """The OpenSSL page's steps: a certificate from the test CA (key in a file), the site, httpd started."""
    ok(host, f"CA_DIR={CA} bash {snippet_path(TEST_CA)} certificate")
    enable_site(host, site)
    start(host)
    return f"{CA}/ca.crt"


@reads("ihs/apache/create-token-key-and-csr.sh", "ihs/apache/set-httpd-openssl-conf.sh",
       "ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf")
def prepare_token_key(host) -> str:
    """The token, httpd's user in pkcs11, the key in the token with a test-CA certificate; returns the CA."""
    token = ready_token(host, "www-data")
    put(host, OPENSSL_PKCS11_CONF, on_host(host, openssl_config("ubuntu-debian")))
    ok(host, f"{token.env} bash {snippet_path('ihs/apache/create-token-key-and-csr.sh')}")
    ca = make_ca(host)
    sign(host, "/etc/ssl/www.example.com.csr")
    ok(host, f"bash {snippet_path('ihs/apache/set-httpd-openssl-conf.sh')}")
    return ca


# prepare_token_key made once and kept as an image (checks/hosts/plugin.py State): tests marked
# @pytest.mark.from_state(TOKEN_KEY) get a fresh_host with the token, the key and the certificate ready.
TOKEN_KEY = State("ihs-token-key", prepare_token_key, snippets=("crypto", "ihs/apache"))


def token_key(host) -> str:
    """prepare_token_key's result: already made on a host started from TOKEN_KEY, else made now."""
    return host.zr_prepared if getattr(host, "zr_prepared", None) else prepare_token_key(host)


@reads("ihs/apache/apache-tls-pkcs11.conf")
def serve_token(host) -> str:
    """The token site: on a host started from TOKEN_KEY (the preparation already made), or from scratch."""
    ca = token_key(host)
    enable_site(host, "ihs/apache/apache-tls-pkcs11.conf")
    start(host)
    return ca


ECDSA_SITE = "ihs/apache/apache-tls-pkcs11-ecdsa.conf"
ECDSA_CERT = "/etc/ssl/certs/www.example.com-ecdsa.crt"  # where the ECDSA site names it


@reads("ihs/apache/create-token-key-and-csr.sh")
def ecdsa_key_step(host):
    """The key step for an ECDSA key, as the page runs it (testinfra's CommandResult: it fails where the token
    makes no P-256 key)."""
    return host.run(f"{token_env()} bash {snippet_path('ihs/apache/create-token-key-and-csr.sh')} ec")


@reads(ECDSA_SITE)
def serve_token_ecdsa(host) -> str:
    """The ECDSA site: the RSA key's preparation, then the P-256 key in the token, its certificate from the test
    CA (the sign step with CERT), the site with both keys, httpd started. Returns the CA."""
    ca = token_key(host)
    step = ecdsa_key_step(host)
    assert step.rc == 0, step.stdout + step.stderr
    ok(host, f"CA_DIR={CA} bash {snippet_path(TEST_CA)} sign /etc/ssl/www.example.com-ecdsa.csr {ECDSA_CERT}")
    enable_site(host, ECDSA_SITE)
    start(host)
    return ca


# utime + stime of every httpd process, and the parent's cutime + cstime (workers it reaped), in clock ticks
_HTTPD_CPU = ("parent=$(cat /run/apache2/apache2.pid); for pid in $(pgrep -x apache2); do "
              "cut -d')' -f2- /proc/$pid/stat | awk -v p=$pid -v parent=$parent "
              "'{print $12 + $13 + (p == parent ? $14 + $15 : 0)}'; done | awk '{s += $1} END {print s}'; "
              "getconf CLK_TCK")


def httpd_cpu_seconds(host) -> float:
    """The CPU time httpd has used so far (every process, and the workers that ended), for the rate benches."""
    ticks, tick = host.check_output(_HTTPD_CPU).split()
    return int(ticks) / int(tick)


def handshake(host, ca: str, *args: str):
    """openssl s_client against the local httpd; returns testinfra's CommandResult (brief output)."""
    opts = " ".join(shlex.quote(a) for a in args)
    return host.run(f"echo | timeout 60 openssl s_client -connect 127.0.0.1:443 -servername www.example.com "
                    f"-CAfile {ca} -verify_return_error -brief {opts} 2>&1")


def negotiated_group(output: str) -> str:
    """The key-exchange group from `openssl s_client -brief` (OpenSSL 3.5): a hybrid group as 'Negotiated TLS1.3
    group: NAME', a classical one as 'Peer Temp Key: X25519, 253 bits' or 'Peer Temp Key: ECDH, prime256v1, 256 bits'
    (OpenSSL's name for secp256r1)."""
    m = re.search(r"^Negotiated TLS1\.3 group: (\S+)", output, re.M) or \
        re.search(r"^(?:Peer|Server) Temp Key: (?:ECDH, )?([^,\s]+)", output, re.M)
    assert m, f"no negotiated group in:\n{output}"
    return {"prime256v1": "secp256r1"}.get(m.group(1), m.group(1))


WORKER_PIN = "/run/zr-worker.pin"  # the PIN as an httpd worker holds it: in its memory, inherited from the parent


def try_export(host, key_label: str, user: str = "www-data") -> dict:
    """token_export.py as user (httpd's), with only what an httpd worker has: the PIN (the page's PIN file is
    root's; a worker holds the PIN in its memory, so the check gets a copy only it can read) and the pkcs11 group."""
    copy_to(host, (Path(__file__).parent / "token_export.py").read_text(), EXPORT_SCRIPT)
    ok(host, f"install -m 0400 -o {shlex.quote(user)} {PIN_FILE} {WORKER_PIN}")
    module = ok(host, f"sed -n 's/^ *pkcs11-module-path *= *//p' {OPENSSL_PKCS11_CONF}").strip()
    out = ok(host, f"su -s /bin/sh {shlex.quote(user)} -c 'python3 {EXPORT_SCRIPT} {shlex.quote(module)} "
                   f"{LABEL} {shlex.quote(key_label)} {WORKER_PIN}'")
    return json.loads(out)


def unwrapped_public_key(host, result: dict) -> str:
    """The public key (PEM) of the private key a successful wrap carried out, decrypted outside the token."""
    copy_to(host, bytes.fromhex(result["wrapped"]), "/tmp/wrapped.bin")
    return ok(host, f"openssl enc -d -aes-256-cbc -K {result['aes_key']} -iv {result['iv']} -in /tmp/wrapped.bin"
                    " | openssl pkey -inform DER -pubout")


def token_public_key(host, key_label: str) -> str:
    """The public key object key_label of the token, through pkcs11-provider (the page's configuration)."""
    return ok(host, f"OPENSSL_CONF={OPENSSL_PKCS11_CONF} openssl pkey -pubin -pubout "
                    f"-in 'pkcs11:token={LABEL};object={key_label};type=public'")
