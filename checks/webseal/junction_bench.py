"""Measure what the SSL junction costs against the TCP junction on the debian13-amd64 container host.

``python -m checks.webseal.junction_bench [--runs N] [--requests R]`` starts one container (no network),
sets up the Apache junction analogue with ``junction_host.serve``, and for each run fetches the study's
5.8 KB page R times over one keep-alive connection through /tcp-jct/ and then /ssl-jct/ (the order
alternates between runs). It writes one row per run and junction, then the median and the spread
(max - min, as a percentage of the median) of the SSL/TCP ratios, to
``snippets/webseal/apache/ssl-junction-cost.csv``; the page shows that file and computes its numbers from
it. The results chapter's harness (snippets/results/measure-tls.sh) serves static files only and cannot
put a proxy in front of a back end, hence this small measurement.
The machine is shared: the load average before and after is recorded.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import statistics
import sys
import uuid

import testinfra

from checks.hosts import engine as eng
from checks.webseal.junction_host import measure, serve

HOST = "debian13-amd64"
OUT = eng.SNIPPETS / "webseal" / "apache" / "ssl-junction-cost.csv"
FIELDS = ["row", "run", "junction", "requests", "seconds", "requests_per_second", "front_cpu_ms_per_request",
          "ssl_over_tcp", "load_before", "load_after"]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args(argv)
    engine = eng.Engine.detect()
    spec = eng.HOSTS[HOST]
    image = engine.ensure_image(spec)
    name = f"zr-jct-bench-{os.getpid()}"
    rows: list[dict[str, str]] = []
    try:
        engine.start(spec, image, uuid.uuid4().hex, name)
        host = testinfra.get_host(f"{engine.scheme}://{name}")
        ca = serve(host)
        load = lambda: " ".join(host.check_output("cat /proc/loadavg").split()[:3])  # noqa: E731
        measure(host, ca, "ssl-jct", 100)  # warm-up: sessions, back-end connections, caches
        measure(host, ca, "tcp-jct", 100)
        for run in range(1, args.runs + 1):
            before = load()
            order = ("tcp-jct", "ssl-jct") if run % 2 else ("ssl-jct", "tcp-jct")
            got = {j: measure(host, ca, j, args.requests) for j in order}
            after = load()
            for j in ("tcp-jct", "ssl-jct"):
                seconds, rate, cpu = got[j]
                rows.append({"row": "run", "run": str(run), "junction": j, "requests": str(args.requests),
                             "seconds": f"{seconds:.2f}", "requests_per_second": f"{rate:.1f}",
                             "front_cpu_ms_per_request": f"{cpu:.3f}", "ssl_over_tcp": "",
                             "load_before": before, "load_after": after})
            rows[-1]["ssl_over_tcp"] = f"{got['ssl-jct'][1] / got['tcp-jct'][1]:.3f}"
        ratios = [float(r["ssl_over_tcp"]) for r in rows if r["ssl_over_tcp"]]
        cpu_ratios = [float(s["front_cpu_ms_per_request"]) / float(t["front_cpu_ms_per_request"])
                      for t, s in zip(rows[::2], rows[1::2], strict=True)]
        for what, values in (("median-throughput-ratio", ratios), ("median-cpu-per-request-ratio", cpu_ratios)):
            med = statistics.median(values)
            rows.append({"row": what, "run": str(len(values)), "junction": "ssl-jct/tcp-jct", "requests": "",
                         "seconds": "", "requests_per_second": "", "front_cpu_ms_per_request": "",
                         "ssl_over_tcp": f"{med:.3f} (spread {100 * (max(values) - min(values)) / med:.1f} %)",
                         "load_before": "", "load_after": ""})
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        OUT.write_text(buf.getvalue(), encoding="utf-8")
        print(buf.getvalue(), end="")
        return 0
    finally:
        engine.remove(name)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
