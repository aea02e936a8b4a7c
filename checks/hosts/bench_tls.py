"""Run the TLS measurement harness on the debian13-amd64 container host and keep its output.

``python -m checks.hosts.bench_tls [--runs N] [--seconds S]`` starts one container from the runbook's
debian13-amd64 image (no network), runs ``snippets/results/measure-tls.sh`` in it against the IHS
chapter's Apache site (``snippets/ihs/apache/apache-tls-openssl.conf``), and writes what it printed and
the three files it made to ``snippets/results/measured/debian13-amd64/``. The results page is built
from those files. The container is removed afterwards, also after a failure or Ctrl-C.
The machine is shared: run it when ``uptime`` shows a low load; the load is recorded in machine.csv.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import uuid

from checks.hosts import engine as eng

HOST = "debian13-amd64"
SITE = "/snippets/ihs/apache/apache-tls-openssl.conf"
OUT = eng.SNIPPETS / "results" / "measured" / HOST
FILES = ("summary.csv", "runs.csv", "machine.csv")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3)
    args = parser.parse_args(argv)
    engine = eng.Engine.detect()
    spec = eng.HOSTS[HOST]
    image = engine.ensure_image(spec)
    run_id = uuid.uuid4().hex
    name = f"zr-bench-{os.getpid()}"
    try:
        engine.start(spec, image, run_id, name)
        proc = engine.run("exec", name, "bash", "/snippets/results/measure-tls.sh", SITE, "--runs", str(args.runs),
                          "--seconds", str(args.seconds), "--out", "/tmp/bench", check=False, timeout=3600)
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            return 1
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / "measure-tls.out").write_text(proc.stdout, encoding="utf-8")
        for f in FILES:
            (OUT / f).write_text(engine.run("exec", name, "cat", f"/tmp/bench/{f}").stdout, encoding="utf-8")
        print(proc.stdout, end="")
        print(f"written: {OUT.relative_to(eng.REPO)}/measure-tls.out, " + ", ".join(FILES))
        return 0
    finally:
        engine.remove(name)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sys.exit(main(sys.argv[1:]))
