"""The measurement harness: run in its short mode on the amd64 host against the IHS chapter's Apache site, its
output validated; the committed full run from `make bench WHAT=tls` validated and cross-checked; the masks it uses
really switch the acceleration off."""

import re
import shlex
from pathlib import Path

import pytest

from checks.hosts.steps import run_snippet
from zrunbook import SNIPPETS
from zrunbook.results.bench_format import validate_dir

ROOT = Path(__file__).resolve().parents[2]
MEASURED = SNIPPETS / "results" / "measured" / "debian13-amd64"
BAD = Path(__file__).resolve().parent / "bad" / "bench"
HARNESS = "results/measure-tls.sh"
SITE = "/snippets/ihs/apache/apache-tls-openssl.conf"
MEASURED_FILES = [f"results/measured/debian13-amd64/{f}" for f in
                  ("summary.csv", "runs.csv", "machine.csv", "measure-tls.out")]


def _read(folder: Path, console: str | None = None) -> list[str | None]:
    texts = [(folder / f).read_text(encoding="utf-8") for f in ("machine.csv", "runs.csv", "summary.csv")]
    return [*texts, (folder / console).read_text(encoding="utf-8") if console else None]


_SHORT_RUNS: dict = {}


def short_run(host) -> dict:
    """One short-mode run of the harness per container, shared by the tests below. While it runs, the closed
    (TIME-WAIT) connections toward the junction back end's TLS and plain ports are counted."""
    if host.zr_container not in _SHORT_RUNS:
        script = (
            f"rm -rf /tmp/zr-short; bash /snippets/{HARNESS} {SITE} --short --port 19443 --out /tmp/zr-short "
            ">/tmp/zr-short.stdout 2>/tmp/zr-short.stderr & b=$!; tls=0; tcp=0; "
            "while kill -0 $b 2>/dev/null; do "
            "t=$(ss -tanH state time-wait '( dport = :19449 )' | wc -l); "
            "p=$(ss -tanH state time-wait '( dport = :19448 )' | wc -l); "
            "((t > tls)) && tls=$t; ((p > tcp)) && tcp=$p; sleep 0.2; done; wait $b; echo \"$? $tls $tcp\""
        )
        rc, tls_closed, tcp_closed = (int(x) for x in host.check_output(f"bash -c {shlex.quote(script)}").split())
        _SHORT_RUNS[host.zr_container] = {
            "rc": rc, "tls_closed": tls_closed, "tcp_closed": tcp_closed,
            "stdout": host.file("/tmp/zr-short.stdout").content_string,
            "stderr": host.file("/tmp/zr-short.stderr").content_string,
            "files": [host.run(f"cat /tmp/zr-short/{f}").stdout for f in ("machine.csv", "runs.csv", "summary.csv")],
        }
    return _SHORT_RUNS[host.zr_container]


@pytest.mark.snippet(HARNESS, "ihs/apache/apache-tls-openssl.conf", checker="testinfra")
def test_harness_short_mode_measures_every_test_and_writes_valid_files(host):
    run = short_run(host)
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    assert validate_dir(*run["files"], run["stdout"]) == []
    # it stopped its private servers and removed its files
    assert host.run("pgrep -f '[z]r-tls-bench'").rc == 1
    assert host.run("ls -d /tmp/zr-tls-bench.* 2>/dev/null").stdout == ""


@pytest.mark.uses("ihs/apache/apache-tls-openssl.conf")
@pytest.mark.snippet(HARNESS, checker="testinfra")
def test_the_junction_proxy_reuses_its_tls_connections_to_the_back_end(host):
    """The results page explains the small SSL-junction cost by mod_proxy keeping its back-end connections open."""
    run = short_run(host)
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    ssl_requests = sum(int(r.split(",")[6]) for r in run["files"][1].splitlines() if ",junction-ssl," in r)
    assert ssl_requests > 100
    assert run["tls_closed"] < ssl_requests / 20, (
        f"{run['tls_closed']} TLS back-end connections closed for {ssl_requests} requests")


@pytest.mark.negative("results/measure-tls.sh",
                      expects="a site without TLS, no site named or a busy port stops the harness with a sentence")
@pytest.mark.snippet(HARNESS, checker="testinfra")
def test_harness_refuses_a_site_without_tls_and_a_busy_port(host):
    r = run_snippet(host, HARNESS, "/etc/apache2/sites-available/000-default.conf", "--short")
    assert r.rc == 1
    assert "has no <VirtualHost> with SSLEngine on" in r.stderr
    r = run_snippet(host, HARNESS)
    assert r.rc == 2
    assert "Name the Apache site file" in r.stderr
    host.run("(openssl s_server -accept 127.0.0.1:18444 -nocert -quiet </dev/null >/dev/null 2>&1 &); sleep 0.5")
    r = run_snippet(host, HARNESS, SITE, "--short")
    host.run("pkill -f 'accept 127.0.0.1:18444'")
    assert r.rc == 1
    assert "Port 18444 on 127.0.0.1 is in use" in r.stderr


@pytest.mark.only_hosts("debian13-amd64", why="AES-NI and the OPENSSL_ia32cap mask exist on x86 only")
@pytest.mark.snippet(HARNESS, checker="testinfra")
def test_x86_mask_switches_aes_ni_off_for_openssl(host):
    script = (SNIPPETS / HARNESS).read_text(encoding="utf-8")
    mask = re.search(r'"software:(OPENSSL_ia32cap=[^"]+)"', script).group(1)

    def aes_gcm(env: str) -> float:
        out = host.run(f"{env} openssl speed -seconds 1 -mr -evp aes-256-gcm -bytes 16384 2>/dev/null").stdout
        return float(re.search(r"^\+F:\d+:AES-256-GCM:([\d.]+)", out, re.M).group(1))

    assert "aes" not in host.run(f"{mask} openssl version -a | grep CPUINFO").stdout.lower()
    assert aes_gcm("") > 5 * aes_gcm(mask)


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(HARNESS, checker="testinfra")
def test_harness_offers_the_studys_three_setups_on_ibm_z(host):
    r = run_snippet(host, HARNESS, SITE, "--setup", "none")
    assert r.rc == 1
    assert "the setups are cpacf+cex cpacf software." in r.stderr
    assert "no Crypto Express path" not in r.stderr  # Debian 13's OpenSSL 3.5 has one


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(HARNESS, checker="testinfra")
def test_harness_says_cex_and_cpacf_are_the_same_setup_with_openssl_before_3_2(host):
    # Issue 16, finding 11: an OpenSSL 3.0 (Ubuntu 24.04's 3.0.13) has no /dev/z90crypt path, so the harness
    # must say that its cpacf+cex and cpacf results cannot differ by Crypto Express. A wrapper first on PATH
    # reports that version and passes everything else to the real openssl.
    host.run_expect([0], "mkdir -p /tmp/old-openssl && printf '%s\\n' '#!/bin/sh' "
                    "'[ \"$1\" = version ] && [ $# -eq 1 ] && { echo \"OpenSSL 3.0.13 30 Jan 2024\"; exit 0; }' "
                    "'exec /usr/bin/openssl \"$@\"' > /tmp/old-openssl/openssl && chmod +x /tmp/old-openssl/openssl")
    r = host.run(f"PATH=/tmp/old-openssl:$PATH bash /snippets/{HARNESS} {SITE} --setup none")
    assert r.rc == 1, r.stderr
    assert "OpenSSL 3.0.13 is older than 3.2 and has no Crypto Express path of its own" in r.stderr


@pytest.mark.snippet(*MEASURED_FILES, checker="bench-results")
def test_bench_validator_rejects_a_summary_whose_ratio_is_not_median_over_bound():
    problems = validate_dir(*_read(BAD / "ratio-not-median-over-bound"), min_runs=1)
    assert len(problems) == 1
    assert "ratio_to_bound" in problems[0]


@pytest.mark.snippet(*MEASURED_FILES, checker="bench-results")
def test_bench_validator_rejects_a_single_run_as_a_full_measurement():
    problems = validate_dir(*_read(BAD / "single-run"), min_runs=3)
    assert problems == ["machine.csv: 1 run(s); at least 3 are needed for a median and a spread"]


@pytest.mark.snippet(*MEASURED_FILES, checker="bench-results")
def test_bench_validator_rejects_a_setup_missing_a_test():
    problems = validate_dir(*_read(BAD / "missing-test"), min_runs=1)
    assert any("misses [('bulk', 'rsa2048', '2.9m')]" in p for p in problems)

