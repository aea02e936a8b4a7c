"""The token site under a steady load: make bench WHAT=soak's data (checks/ihs/bench_apache_soak.py writes it).

``snippets/results/measured/soak.csv``: one row per sample (every SAMPLE_SECONDS of the soak): the seconds since the
start, the new TLS connections completed and failed so far, httpd's resident memory (all its processes) and the
token's open sessions as openCryptoki counts them (``pkcsconf -t``). ``file_problems`` is the bench-soak checker's
validator (a soak with a failed handshake or unbounded growth is not a result); ``summary_sentence`` is what the
results page states.
"""

from __future__ import annotations

from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook.facts import measured, rows

DATA = SNIPPETS / "results" / "measured" / "soak.csv"
COLUMNS = ["host", "seconds", "completed", "failed", "httpd_rss_kib", "token_sessions"]
MIN_SECONDS = 300  # the five minutes
GROWTH = 1.25  # memory at the end at most this much above the sample one minute in
SETTLED = 60  # seconds after which workers and sessions have been made


def file_problems(path: Path) -> list[str]:
    data, problems = measured(path, COLUMNS)
    if problems:
        return problems
    out = []
    for host in sorted({r["host"] for r in data}):
        samples = [r for r in data if r["host"] == host]
        secs = [int(r["seconds"]) for r in samples]
        if secs != sorted(secs) or secs[-1] < MIN_SECONDS:
            out.append(f"{path.name}: {host}: the samples must run in time order for at least {MIN_SECONDS} s "
                       f"(they end at {secs[-1]} s)")
            continue
        last = samples[-1]
        if int(last["failed"]):
            out.append(f"{path.name}: {host}: {last['failed']} handshakes failed during the soak")
        done = [int(r["completed"]) for r in samples]
        if done != sorted(done) or done[-1] == 0:
            out.append(f"{path.name}: {host}: the completed connections must grow from sample to sample")
        settled = next(r for r in samples if int(r["seconds"]) >= SETTLED)
        if int(last["httpd_rss_kib"]) > GROWTH * int(settled["httpd_rss_kib"]):
            out.append(f"{path.name}: {host}: httpd's memory grew from {settled['httpd_rss_kib']} KiB at "
                       f"{settled['seconds']} s to {last['httpd_rss_kib']} KiB at the end, more than "
                       f"{GROWTH:.2f} times")
        peak_settled = max(int(r["token_sessions"]) for r in samples if int(r["seconds"]) <= int(settled["seconds"]))
        if int(last["token_sessions"]) > 2 * max(peak_settled, 1):
            out.append(f"{path.name}: {host}: the token's sessions grew to {last['token_sessions']} at the end "
                       f"from at most {peak_settled} in the first {settled['seconds']} s")
    return out


def summary_sentence(path: Path = DATA) -> str:
    parts = []
    for host in sorted({r["host"] for r in rows(path)}):
        samples = [r for r in rows(path) if r["host"] == host]
        first, last = samples[0], samples[-1]
        rss = [int(r["httpd_rss_kib"]) for r in samples]
        sessions = [int(r["token_sessions"]) for r in samples]
        parts.append(f"on {host}, {int(last['completed'])} new TLS connections in {last['seconds']} s, "
                     f"{last['failed']} failed; httpd's resident memory {rss[0] / 1024:.0f} MiB at the first sample, "
                     f"{rss[-1] / 1024:.0f} MiB at the end, {max(rss) / 1024:.0f} MiB at most; the token's open "
                     f"sessions {sessions[0]} at the first sample, {sessions[-1]} at the end, {max(sessions)} at most"
                     f" (first sample at {first['seconds']} s)")
    return "; ".join(parts)
