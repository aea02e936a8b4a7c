"""verify's reports: ``document`` (verify.json: per host and step the verdict, message and the guide's link) and
``html`` (verify.html, rendered from that JSON: one table per host, each row linked to its step in the guide).
The JUnit XML is pytest's own (``--junitxml``). No report holds a secret: the steps' environment is never
recorded, only what the steps print (checks/verify/test_verify.py searches every report for the test PINs).
"""

from __future__ import annotations

import html as h
import time
from collections import Counter

from zrunbook import ROOT

VERDICTS = ("passed", "failed", "not applicable")


def guide_base(profile) -> str:
    return (profile.guide_url or (ROOT / "build" / "html").as_uri()).rstrip("/")


def page_url(profile, step) -> str:
    return f"{guide_base(profile)}/{step.page}.html#{step.label}"


def document(profile, inventory: str, hosts: list[str], rows: list[dict], seconds: float) -> dict:
    order = {h: i for i, h in enumerate(hosts)}
    rows = sorted(rows, key=lambda r: (order.get(r["host"], len(order)), r["step"]))
    counts = Counter(r["verdict"] for r in rows)
    return {"site": profile.name, "inventory": inventory,
            "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(seconds, 1),
            "hosts": hosts,
            "totals": {v: counts.get(v, 0) for v in VERDICTS}, "results": rows}


def html(data: dict) -> str:
    site = h.escape(data["site"])
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>zrunbook verify: {site}</title>"
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}"
             "td,th{border:1px solid #999;padding:.3em .6em;text-align:left;vertical-align:top}"
             ".passed{background:#dfd}.failed{background:#fdd}.not-applicable{background:#eee}</style></head><body>",
             f"<h1>zrunbook verify: {h.escape(data['site'])}</h1>",
             f"<p>Inventory {h.escape(data['inventory'])}, {len(data['hosts'])} host(s), {data['seconds']} s, "
             f"{h.escape(data['generated'])}. " + ", ".join(f"{n} {v}" for v, n in data["totals"].items()) + ".</p>"]
    for host in data["hosts"]:
        rows = [r for r in data["results"] if r["host"] == host]
        parts.append(f"<h2 id='host-{h.escape(host)}'>{h.escape(host)}</h2><table><tr><th>Step</th><th>Verdict</th>"
                     "<th>What the host said</th></tr>")
        for r in rows:
            parts.append(f"<tr class='{r['verdict'].replace(' ', '-')}'><td><a href='{h.escape(r['url'])}'>"
                         f"{h.escape(r['title'])}</a><br><code>{h.escape(r['snippet'])}</code></td>"
                         f"<td>{h.escape(r['verdict'])}</td><td>{h.escape(r['message'])}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
