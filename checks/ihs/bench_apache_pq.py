"""make bench WHAT=pq: what the hybrid post-quantum group costs Apache httpd. Full TLS 1.3 handshakes per server
CPU-second against the token page's site (its Groups line puts X25519MLKEM768 first), with a client that offers only
X25519MLKEM768 against one that offers only X25519, on each host in ZR_HOSTS.

Not part of `make check` (the file name does not start with test_). Per host: the token site served from TOKEN_KEY,
the first handshakes made (each worker's token login is part of a start, not of the rate), then ROUNDS rounds; in
each round one run per group, in turn, of N new connections one after another from openssl s_client (no session
offered back, so each is a full handshake); every handshake is checked to have used the group asked for. The
server's CPU time is that of every httpd process (as in bench_apache_token.py). Writes
snippets/results/measured/pq-handshake-cost.csv (zrunbook/results/pq_cost.py) and prints the ratio.
The key stays in the token: on amd64 openCryptoki's soft token signs, on the s390x host the ICA token under qemu,
whose figures say nothing about IBM Z hardware speed.
"""

from __future__ import annotations

import pytest

from checks.hosts import apache
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.steps import arch
from zrunbook.results import pq_cost

ROUNDS = 5
COUNT = {"amd64": 1000, "s390x": 40}  # per run: on amd64 over a second of httpd CPU (10 ms ticks); qemu is slower
GROUPS = (pq_cost.HYBRID, pq_cost.CLASSICAL)
ROWS: list[dict] = []

def handshakes(host, ca: str, count: int, group: str, sigalgs: str) -> None:
    """count full handshakes offering only group; each must report that group (OpenSSL 3.5's -brief lines: a hybrid
    group as 'Negotiated TLS1.3 group', X25519 as 'Peer Temp Key')."""
    used = f"^(Negotiated TLS1.3 group: {group}|Peer Temp Key: {group},)"
    r = host.run(f"for i in $(seq {count}); do timeout 60 openssl s_client -connect 127.0.0.1:443 -servername "
                 f"www.example.com -CAfile {ca} -verify_return_error -tls1_3 -no_ticket -brief -groups {group} "
                 f"-sigalgs {sigalgs} </dev/null 2>&1 | grep -qE '{used}' || exit 1; done")
    assert r.rc == 0, f"a handshake with {group} failed or used another group during the measurement"


# the bench merges its new rows into the data file it writes (a read the observer sees)
@pytest.mark.uses("results/measured/pq-handshake-cost.csv")
@pytest.mark.from_state(TOKEN_KEY)
def test_hybrid_group_against_x25519(fresh_host):
    sigalgs = apache.QEMU_SIGALGS if arch(fresh_host) == "s390x" else "rsa_pss_rsae_sha256"
    ca = apache.serve_token(fresh_host)
    count = COUNT[arch(fresh_host)]
    for group in GROUPS:
        handshakes(fresh_host, ca, 8, group, sigalgs)  # every worker's first use of the key: part of a start
    rates: dict[str, list[float]] = {g: [] for g in GROUPS}
    for _ in range(ROUNDS):
        for group in GROUPS:
            before = apache.httpd_cpu_seconds(fresh_host)
            handshakes(fresh_host, ca, count, group, sigalgs)
            rates[group].append(count / (apache.httpd_cpu_seconds(fresh_host) - before))
    for group in GROUPS:
        row = pq_cost.row(fresh_host.zr_name, "apache", group, count, rates[group])
        ROWS.append(row)
        print(f"{fresh_host.zr_name} {group}: {row['median']} (runs {[round(r, 1) for r in rates[group]]})")
    hybrid, classical = (float(r["median"]) for r in ROWS[-2:])
    print(f"{fresh_host.zr_name}: the hybrid group makes {hybrid / classical:.3f} of X25519's rate")


@pytest.fixture(scope="session", autouse=True)
def write_csv():
    yield
    if ROWS:
        pq_cost.merge(pq_cost.DATA, ROWS)
        print(f"wrote {pq_cost.DATA}")
