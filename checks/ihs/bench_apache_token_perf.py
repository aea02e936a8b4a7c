"""make bench WHAT=token-perf: where httpd's CPU goes in a full TLS 1.3 handshake with the key in the token and with
it in a file (issue 46, item 1), on the amd64 host.

The two-key token site with the page's OpenSSL configuration, except that pkcs11-provider is a scratch build of
1.0 (checks/ihs/p11prov_builds.py: the same code as Debian's library, built with Debian's flags, its symbols kept;
Debian's library is stripped and Debian's debug archive is not reachable here, so with it the provider's frames
would have no names; ZR_PKCS11_PROVIDER_GIT names the source). Per key type: httpd started afresh, the first
handshakes made (each worker's login), then perf (this machine's, outside the container) samples every httpd
process (cpu-clock at FREQ Hz, call graphs unwound from DWARF) while COUNT handshakes are made one after another,
as make bench WHAT=token makes them; httpd's CPU time is read from /proc before and after. The same certificate
types with their keys in files are measured the same way, RUNS runs each, token and file alternating.
perf report gives the samples per library; perf script, folded by
inferno-collapse-perf (cargo install inferno), gives a flame graph per key type with the key in the token. (A
differential graph, file to token, said little: the signature's arithmetic moves from OpenSSL's stack under mod_ssl
to the soft token's, so nearly every frame is new rather than grown.)

Writes snippets/results/measured/token-perf.csv and the flame graphs (SVG and PNG) in docs/results/figures/;
perf's raw data stays in build/token-perf/.
perf's own work in the kernel while it samples is counted in httpd's CPU time, so the µs per handshake are higher
than without perf; the token and file runs pay it alike. Not part of `make check`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from checks.hosts import apache
from checks.hosts import engine as eng
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.util import ok
from checks.ihs import p11prov_builds
from checks.ihs.bench_apache_token import SITE, handshakes, keys_in_files
from checks.ihs.bench_apache_token_settings import CERTS, CONF, SIGALGS, first_handshakes
from zrunbook import BUILD
from zrunbook.results import token_perf, token_settings

pytestmark = pytest.mark.only_hosts("debian13-amd64", why="the soft token's figures are the ones the goal is set on")

COUNT = 1000  # handshakes per run, key and place
RUNS = 3
FREQ = 999  # samples per second and CPU
OUT = BUILD / "token-perf"
BUILD_NAME = "1.0"
REPORT = re.compile(r"^\s*([\d.]+)%\s+(\d+)\s+(\S+)\s*$")


def tool(name: str, install: str) -> str:
    path = shutil.which(name) or shutil.which(str(Path.home() / ".cargo" / "bin" / name))
    if path is None:
        raise AssertionError(f"make bench WHAT=token-perf needs {name}: {install}")
    return path


def httpd_pids(cli: str, container: str) -> list[str]:
    out = subprocess.run([cli, "top", container, "-eo", "pid,comm"], capture_output=True, text=True,
                         check=True).stdout
    pids = [line.split()[0] for line in out.splitlines()[1:] if line.split()[1:] in (["apache2"], ["httpd"])]
    assert pids, f"no httpd process in {container}:\n{out}"
    return pids


def sample(host, cli: str, ca: str, sigalgs: str, data: Path) -> tuple[float, int]:
    """perf samples httpd over COUNT handshakes; returns httpd's CPU seconds over them and the process count."""
    perf = tool("perf", "apt-get install linux-perf")
    apache.start(host)
    assert first_handshakes(host, ca, sigalgs) == 0, "a first handshake failed"
    pids = httpd_pids(cli, host.zr_container)
    ctl, ack = data.with_suffix(".ctl"), data.with_suffix(".ack")
    for fifo in (ctl, ack):
        fifo.unlink(missing_ok=True)
        os.mkfifo(fifo)
    # perf attaches with its events off (-D -1) and turns them on when told, and says so on the ack fifo
    rec = subprocess.Popen([perf, "record", "-q", "-e", "cpu-clock", "-F", str(FREQ), "--call-graph", "dwarf,16384",
                            "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-p", ",".join(pids), "-o", str(data)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(ctl, "w") as c, open(ack) as a:
        c.write("enable\n")
        c.flush()
        assert a.readline().strip() == "ack", "perf did not acknowledge 'enable'"
    before = apache.httpd_cpu_seconds(host)
    handshakes(host, ca, COUNT, sigalgs)
    cpu = apache.httpd_cpu_seconds(host) - before
    rec.send_signal(signal.SIGINT)
    _, err = rec.communicate(timeout=300)
    assert rec.returncode in (0, -signal.SIGINT), f"perf record failed: {err.decode()}"
    ctl.unlink()
    ack.unlink()
    return cpu, len(pids)


def libraries(data: Path) -> list[tuple[str, int]]:
    perf = tool("perf", "apt-get install linux-perf")
    out = subprocess.run([perf, "report", "--no-inline", "-i", str(data), "--no-children", "--sort", "dso", "-n",
                          "-q", "--stdio", "-g", "none"], capture_output=True, text=True, check=True).stdout
    found = [(m[3], int(m[2])) for m in map(REPORT.match, out.splitlines()) if m]
    assert found, f"perf report gave no samples per library:\n{out[:2000]}"
    return found


def folded(data: Path) -> Path:
    perf = tool("perf", "apt-get install linux-perf")
    collapse = tool("inferno-collapse-perf", "cargo install inferno")
    script = subprocess.run([perf, "script", "--no-inline", "-i", str(data)], capture_output=True, check=True).stdout
    out = data.with_suffix(".folded")
    out.write_bytes(subprocess.run([collapse], input=script, capture_output=True, check=True).stdout)
    return out


def svg(folded_stacks: bytes, title: str, dest: Path) -> None:
    """The flame graph as SVG (the HTML guide's, interactive when opened by itself) and as PNG (the PDF's), the PNG
    drawn by headless Chromium from the SVG at the SVG's own size."""
    graph = tool("inferno-flamegraph", "cargo install inferno")
    chromium = tool("chromium", "apt-get install chromium")
    text = subprocess.run([graph, "--title", title, "--minwidth", "0.2"], input=folded_stacks, capture_output=True,
                          check=True).stdout
    dest.with_suffix(".svg").write_bytes(text)
    size = re.search(rb'<svg[^>]* width="(\d+)" height="(\d+)"', text)
    assert size, "inferno-flamegraph wrote no SVG size"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size={int(size[1])},{int(size[2])}", f"--screenshot={dest.with_suffix('.png')}",
                    dest.with_suffix(".svg").as_uri()], capture_output=True, check=True, timeout=120)


def rows(host: str, key: str, place: str, samples: Counter, cpu: list[float]) -> list[dict]:
    """The CSV's rows for one key and place: every run's samples per library summed, each library's share of them
    applied to httpd's CPU time of every run over every run's handshakes; each run's own µs per handshake beside."""
    total = sum(samples.values())
    runs = " ".join(f"{1e6 * c / COUNT:.0f}" for c in cpu)
    per = 1e6 * sum(cpu) / (COUNT * len(cpu))
    return [{"host": host, "key": key, "key_in": place, "library": lib, "samples": n,
             "share_percent": f"{100 * n / total:.2f}", "cpu_us_per_handshake": f"{per * n / total:.1f}",
             "handshakes": COUNT * len(cpu), "runs_us_per_handshake": runs} for lib, n in samples.most_common()]


def summed(folded_runs: list[bytes]) -> bytes:
    """Folded stacks of several runs as one profile (the count of each stack summed)."""
    total: Counter = Counter()
    for text in folded_runs:
        for line in text.decode().splitlines():
            stack, _, n = line.rpartition(" ")
            total[stack] += int(n)
    return "".join(f"{stack} {n}\n" for stack, n in sorted(total.items())).encode()


# the bench writes its data file and SVGs (reads the observer sees)
@pytest.mark.uses("results/measured/token-perf.csv")
@pytest.mark.from_state(TOKEN_KEY)
def test_where_the_cpu_goes_with_the_key_in_the_token_and_in_a_file(fresh_host):
    host, cli = fresh_host, eng.Engine.detect().cli
    OUT.mkdir(parents=True, exist_ok=True)
    ca = apache.serve_token_ecdsa(host)
    module = p11prov_builds.install(host, cli)[BUILD_NAME]
    page_conf = ok(host, f"cat {CONF}")
    apache.put(host, CONF, page_conf.replace(token_settings.CACHE_KEYS,
                                             f"{token_settings.CACHE_KEYS}\nmodule = {module}"))
    # the site file and its two certificates as the token site has them and as keys_in_files leaves them
    saved = f"{SITE} {CERTS[0]} {CERTS[1]}"
    ok(host, f"mkdir -p /tmp/token /tmp/file && cp {saved} /tmp/token/")
    keys_in_files(host, ecdsa=True)
    ok(host, f"cp {saved} /tmp/file/")
    samples: dict[tuple[str, str], Counter] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    stacks: dict[str, list[bytes]] = {}
    for n in range(RUNS):  # token and file alternate, so that a drift of the machine falls on both alike
        for place in token_perf.PLACES:
            ok(host, " && ".join(f"cp /tmp/{place}/{Path(f).name} {f}" for f in saved.split()))
            for key, sigalgs in SIGALGS.items():
                data = OUT / f"{key}-{place}-{n + 1}.data"
                seconds, procs = sample(host, cli, ca, sigalgs, data)
                samples.setdefault((key, place), Counter()).update(dict(libraries(data)))
                cpu.setdefault((key, place), []).append(seconds)
                if place == "token":
                    stacks.setdefault(key, []).append(folded(data).read_bytes())
                print(f"run {n + 1}, {key} key in {place}: {COUNT} handshakes, httpd {seconds:.2f} CPU-s over "
                      f"{procs} processes, {1e6 * seconds / COUNT:.0f} µs each", flush=True)
    new = [r for (key, place), c in samples.items() for r in rows(host.zr_name, key, place, c, cpu[key, place])]
    for key in SIGALGS:
        title = f"httpd, {key} key in the token (pkcs11-provider 1.0, soft token), {RUNS} x {COUNT} handshakes"
        svg(summed(stacks[key]), title, token_perf.FIGURES / f"token-flamegraph-{key}")
    token_perf.merge(new)
    print(f"wrote {token_perf.DATA}\n{token_perf.sentence()}")
