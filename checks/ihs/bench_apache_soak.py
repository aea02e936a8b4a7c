"""make bench WHAT=soak: the Apache token site under a steady load of new TLS connections for five minutes.

Not part of `make check` (the file name does not start with test_): it takes the five minutes. On the amd64 host
from TOKEN_KEY the token page's site is started (no warm-up), then CLIENTS clients inside the container each open
new TLS connections to 127.0.0.1 one after another with a pause between them (at most about 20 a second in all),
each verifying the certificate, for SECONDS; every SAMPLE seconds the bench records the connections completed and
failed so far, httpd's resident memory (VmRSS of all its processes) and the token's open sessions (``pkcsconf -t``,
as openCryptoki's slot daemon counts them). It fails on any failed handshake, and on memory or sessions that keep
growing (zrunbook/results/soak.py, the same rules the data file's checker holds), and writes
snippets/results/measured/soak.csv. ZR_SOAK_SECONDS shortens a trial run (the file is then not written).
"""

from __future__ import annotations

import csv
import os
import time

import pytest

from checks.hosts import apache
from checks.hosts.apache import TOKEN_KEY
from zrunbook.results import soak

pytestmark = pytest.mark.only_hosts("debian13-amd64",
                                    why="a measurement of the amd64 host: under qemu it would time the emulation")

SECONDS = int(os.environ.get("ZR_SOAK_SECONDS", soak.MIN_SECONDS))
SAMPLE, CLIENTS, PAUSE = 10, 4, 0.15
WORK = "/tmp/soak"
CLIENT = (f"end=$(( $(date +%s) + {SECONDS} )); while [ $(date +%s) -lt $end ]; do "
          "if timeout 30 openssl s_client -connect 127.0.0.1:443 -servername www.example.com -CAfile @CA@ "
          "-verify_return_error -brief </dev/null >/dev/null 2>&1; then echo ok; else echo failed; fi; "
          f"sleep {PAUSE}; done")
SAMPLER = (f"cat {WORK}/c* 2>/dev/null | grep -c '^ok' || true; cat {WORK}/c* 2>/dev/null | grep -c '^failed' || true; "
           "for p in $(pgrep -x apache2); do grep VmRSS /proc/$p/status; done | awk '{s += $2} END {print s}'; "
           "pkcsconf -t | awk -v l=IBMICATOK '/Label:/ {mine = ($2 == l)} mine && /^[[:space:]]*Sessions:/ "
           "{split($2, a, \"/\"); print a[1]; exit}'")


# the bench merges its new rows into the data file it writes (a read the observer sees)
@pytest.mark.uses("results/measured/soak.csv")
@pytest.mark.from_state(TOKEN_KEY)
def test_five_minutes_of_new_connections(fresh_host):
    ca = apache.serve_token(fresh_host)
    fresh_host.run_expect([0], f"mkdir -p {WORK}")
    for i in range(CLIENTS):
        fresh_host.run_expect([0], f"setsid nohup bash -c {CLIENT.replace('@CA@', ca)!r} >{WORK}/c{i} 2>/dev/null "
                                   "</dev/null &")
    start, samples = time.monotonic(), []
    while True:
        time.sleep(SAMPLE)
        seconds = round(time.monotonic() - start)
        completed, failed, rss, sessions = fresh_host.check_output(SAMPLER).split()
        samples.append({"host": fresh_host.zr_name, "seconds": seconds, "completed": completed, "failed": failed,
                        "httpd_rss_kib": rss, "token_sessions": sessions})
        print(samples[-1])
        if seconds >= SECONDS + 2:  # the clients stop at SECONDS; one more sample sees their last connections
            break
    tmp = soak.DATA.with_suffix(".part")
    kept = [r for r in csv.DictReader(soak.DATA.open(encoding="utf-8"))
            if r["host"] != fresh_host.zr_name] if soak.DATA.exists() else []
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, soak.COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(kept + samples)
    problems = soak.file_problems(tmp) if SECONDS >= soak.MIN_SECONDS else []
    if SECONDS >= soak.MIN_SECONDS and not problems:
        tmp.replace(soak.DATA)
    else:
        tmp.unlink()
    assert int(samples[-1]["failed"]) == 0, fresh_host.run("tail -30 /var/log/apache2/error.log").stdout
    assert not problems, problems

