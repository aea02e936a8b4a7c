"""The cost of the token on this machine: full TLS handshakes per server CPU-second of Open Liberty with its key in
the openCryptoki soft token (the page's server.xml) beside the same server with a PKCS#12 key file.

Not part of `make check` (the file name does not start with test_); run it with `make bench WHAT=liberty`. Each variant:
the server started once, 300 handshakes to warm the JIT, then 3 runs of 200 new TLS 1.3 connections from openssl
s_client (each a full handshake: no tickets); the server's CPU time is read from /proc/<pid>/stat before and after
each run. Prints the median and the spread ((max - min) / median) per variant, and the ratio, and writes both into
snippets/results/measured/token-cost.csv beside Apache's (zrunbook/results/token_cost.py).
On amd64 the soft token signs in software through openCryptoki: the figure is the cost of going through PKCS#11
and the token's session handling, not what Crypto Express would do.
"""

from __future__ import annotations

import os
import statistics

import pytest

from checks.hosts import liberty
from checks.hosts.util import output
from zrunbook.results import token_cost

TARGET = f"localhost:{liberty.PORT}"

WARMUP, HANDSHAKES, RUNS = 300, 200, 3
P12 = "/tmp/liberty/req/key.p12"
P12_PASSWORD = "bench-p12"  # test data only
RATES: dict[str, list[float]] = {}


def server_cpu(host) -> float:
    pid = host.check_output("pgrep -u wasadmin -f 'ws-server.jar' | head -1").strip()
    fields = host.check_output(f"cat /proc/{pid}/stat").rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime


def handshakes(host, count: int) -> None:
    result = host.run(f"for i in $(seq {count}); do openssl s_client -connect {TARGET} -no_ticket -brief "
                      "</dev/null >/dev/null 2>&1 || exit 1; done")
    assert result.rc == 0, output(result)


def measure(host) -> list[float]:
    handshakes(host, WARMUP)
    rates = []
    for _ in range(RUNS):
        before = server_cpu(host)
        handshakes(host, HANDSHAKES)
        rates.append(HANDSHAKES / (server_cpu(host) - before))
    return rates


def report(name: str, rates: list[float]) -> float:
    median = statistics.median(rates)
    spread = (max(rates) - min(rates)) / median
    print(f"{name}: {median:.0f} full handshakes per server CPU-second (runs {[round(r) for r in rates]}, "
          f"spread {spread:.0%})")
    return median


# the bench merges its new rows into the data file it writes (a read the observer sees)
@pytest.mark.uses("results/measured/token-cost.csv")
def test_handshakes_per_cpu_second_token_key_and_pkcs12_key(running):
    host, _ca, _result = running
    RATES["token"] = measure(host)
    token = report("key in the token (SunPKCS11, openCryptoki soft token)", RATES["token"])
    liberty.stop(host)
    host.run_expect([0], f"runuser -u wasadmin -- keytool -genkeypair -keystore {P12} -storetype PKCS12 "
                         f"-storepass {P12_PASSWORD} -alias default -keyalg RSA -keysize 2048 -dname CN=localhost "
                         "-ext san=dns:localhost -validity 30")
    host.run_expect([0], f"perl -0pi -e 's|<keyStore id=\"defaultKeyStore\".*?/>|<keyStore id=\"defaultKeyStore\" "
                         f"type=\"PKCS12\" location=\"{P12}\" password=\"{P12_PASSWORD}\"/>|s' "
                         f"{liberty.SERVER_DIR}/server.xml")
    host.run_expect([0], f"grep -c 'type=\"PKCS12\"' {liberty.SERVER_DIR}/server.xml")
    assert liberty.start(host).rc == 0
    RATES["file"] = measure(host)
    file_key = report("key in a PKCS#12 file (software RSA)", RATES["file"])
    print(f"the token's share: {token / file_key:.2f} of the file key's rate")
    token_cost.merge(token_cost.DATA, [token_cost.row(host.zr_name, "liberty", "rsa2048", place, HANDSHAKES, rates)
                                       for place, rates in (("token", RATES["token"]), ("file", RATES["file"]))])
    assert token > 0
    assert file_key > 0


pytestmark = pytest.mark.filterwarnings("ignore")
