"""make bench WHAT=token: what the token costs Apache httpd. Full TLS handshakes per server CPU-second with the key
in the openCryptoki token (the token page's site and OpenSSL configuration) beside the same site with a key of the
same type in a file, on each host in ZR_HOSTS; RSA 2048 on every host, ECDSA P-256 where the token makes one.

Not part of `make check` (the file name does not start with test_). Per host and key: the token site served from
TOKEN_KEY, the first handshakes made (each worker's token login is part of a start, not of the rate), then RUNS runs
of N new TLS 1.3 connections one after another from openssl s_client (no session offered back, so each is a full
handshake); the server's CPU time is that of every httpd process (utime + stime from /proc, the parent's cutime and
cstime for workers that ended). Then the same certificate type with its key in a file: a new key, signed by the
same test CA, the site file's key URIs replaced by the file, httpd restarted, the same runs. Writes
snippets/results/measured/token-cost.csv (one row per host, server, key and place; zrunbook/results/token_cost.py)
and prints the ratios.
On amd64 the token is openCryptoki's soft token (software RSA and ECDSA behind PKCS#11); on the s390x host it is the
ICA token under qemu, whose figures say nothing about IBM Z hardware; Crypto Express was not measured.
"""

from __future__ import annotations

import pytest

from checks.hosts import apache
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.steps import arch, snippet_path
from zrunbook.results import token_cost

RUNS = 3
COUNT = {"amd64": 600, "s390x": 40}  # handshakes per run (qemu runs s390x code many times slower)
SITE = "/etc/apache2/sites-available/tls.conf"
ROWS: list[dict] = []

def handshakes(host, ca: str, count: int, sigalgs: str) -> None:
    r = host.run(f"for i in $(seq {count}); do timeout 60 openssl s_client -connect 127.0.0.1:443 -servername "
                 f"www.example.com -CAfile {ca} -verify_return_error -tls1_3 -no_ticket -brief -sigalgs {sigalgs} "
                 "</dev/null >/dev/null 2>&1 || exit 1; done")
    assert r.rc == 0, "a handshake failed during the measurement"


def measure(host, ca: str, sigalgs: str) -> list[float]:
    count = COUNT[arch(host)]
    handshakes(host, ca, 8, sigalgs)  # every worker's first use of the key: part of a start, not of the rate
    rates = []
    for _ in range(RUNS):
        before = apache.httpd_cpu_seconds(host)
        handshakes(host, ca, count, sigalgs)
        rates.append(count / (apache.httpd_cpu_seconds(host) - before))
    return rates


def record(host, key: str, key_in: str, rates: list[float]) -> float:
    row = token_cost.row(host.zr_name, "apache", key, key_in, COUNT[arch(host)], rates)
    ROWS.append(row)
    print(f"{host.zr_name} {key} key in {key_in}: {row['median']} (runs {[round(r) for r in rates]})")
    return float(row["median"])


def keys_in_files(host, ecdsa: bool) -> None:
    """New keys in files for the site's certificates (same types), signed by the same test CA; the site names them."""
    pairs = [("rsa", "/etc/ssl/certs/www.example.com.crt", "-newkey rsa:2048")]
    if ecdsa:
        pairs.append(("ec", apache.ECDSA_CERT, "-newkey ec -pkeyopt ec_paramgen_curve:P-256"))
    for name, cert, newkey in pairs:
        key = f"/etc/ssl/private/bench-{name}.key"
        host.run_expect([0], f"openssl req -new -nodes {newkey} -keyout {key} -subj /CN=www.example.com "
                             f"-addext subjectAltName=DNS:www.example.com -out /tmp/bench-{name}.csr 2>/dev/null")
        sign = f"CA_DIR={apache.CA} bash {snippet_path(apache.TEST_CA)} sign"
        host.run_expect([0], f"{sign} /tmp/bench-{name}.csr {cert}")
        label = "apachekey-ec" if name == "ec" else "apachekey"
        host.run_expect([0], f"sed -i 's|\"pkcs11:token=[^;]*;object={label};type=private\"|{key}|' {SITE}")
    host.run_expect([1], f"grep -q pkcs11: {SITE}")
    apache.start(host)


# the bench merges its new rows into the data file it writes (a read the observer sees)
@pytest.mark.uses("results/measured/token-cost.csv")
@pytest.mark.from_state(TOKEN_KEY)
def test_token_against_file_key(fresh_host):
    ecdsa = arch(fresh_host) == "amd64"  # under qemu the ICA token makes no P-256 key (no CPACF ECC)
    rsa_sig = apache.QEMU_SIGALGS if arch(fresh_host) == "s390x" else "rsa_pss_rsae_sha256"
    ca = apache.serve_token_ecdsa(fresh_host) if ecdsa else apache.serve_token(fresh_host)
    token = {"rsa2048": record(fresh_host, "rsa2048", "token", measure(fresh_host, ca, rsa_sig))}
    if ecdsa:
        token["ecdsa-p256"] = record(fresh_host, "ecdsa-p256", "token", measure(fresh_host, ca, "ECDSA+SHA256"))
    keys_in_files(fresh_host, ecdsa)
    file_key = {"rsa2048": record(fresh_host, "rsa2048", "file", measure(fresh_host, ca, rsa_sig))}
    if ecdsa:
        file_key["ecdsa-p256"] = record(fresh_host, "ecdsa-p256", "file", measure(fresh_host, ca, "ECDSA+SHA256"))
    for key, rate in token.items():
        print(f"{fresh_host.zr_name} {key}: the token path makes {rate / file_key[key]:.2f} of the file path's rate")


@pytest.fixture(scope="session", autouse=True)
def write_csv():
    yield
    if ROWS:
        token_cost.merge(token_cost.DATA, ROWS)
        print(f"wrote {token_cost.DATA}")
