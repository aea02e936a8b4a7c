"""The results ledger: what checks each snippet, and what happened the last time it was checked.

One file, ``ledger.json`` at the project root, committed. The pytest plugin (checks/zrunbook_plugin.py)
is its only writer: at collection it records which test checks which snippet with which checker on which
host (``checks``), at the end of a run the outcome of each test for the exact bytes it checked (``runs``:
sha256, date, commit). The guide's badges and the deployer's bundle only read it, and both ask
``outcome()``, so a page and a manifest never disagree.

A fresh clone therefore shows the outcomes of the last recorded check of each file's current bytes (the
way the Rust book commits its regenerated output); a file changed since then shows "stale", never
"passed". ``make check`` refreshes the ledger; commit it with the change it checked.

Format (``"format": 1``)::

    {"format": 1, "snippets": {"crypto/x.sh": {
        "checks": [{"checker": "shellcheck", "host": null, "test": "checks/...::test_x"}],
        "runs":   [{"checker": "shellcheck", "host": null, "test": "checks/...::test_x", "outcome": "passed",
                    "sha256": "...", "date": "2026-11-23", "commit": "f11b611", "index": "unverified: ..."}]}}}

``host`` is a container host's name, or null for a static checker. ``index`` appears only when the host
image was built from a Debian index that did not match the signed Release (zrunbook/hosts/mirror.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from zrunbook import ROOT

LEDGER = ROOT / "ledger.json"
FORMAT = 1
STATIC = "static"
OUTCOMES = ("passed", "failed", "stale", "not run")


def load(path: Path = LEDGER) -> dict:
    """The ledger at path; an empty ledger when there is none. A ledger of another format is an error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"format": FORMAT, "snippets": {}}
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: ledger format {data.get('format')!r}, this library reads {FORMAT}")
    return data


def save(data: dict, path: Path = LEDGER) -> None:
    """Write beside the file and rename over it: a reader sees the old ledger or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def host_name(host: str | None) -> str:
    return host or STATIC


def outcome(tests: list[str], runs: list[dict], digest: str | None) -> str:
    """The outcome of one checker on one host for a file whose current sha256 is ``digest``.

    ``tests`` are the tests that check the file with that checker on that host, ``runs`` their last
    recorded results. "failed" when a run of these bytes failed; "stale" when a test last ran on other
    bytes; "not run" when a test has no result; "passed" only when every test passed on these bytes.
    """
    last = {r["test"]: r for r in runs if r["test"] in tests}
    if not tests or not last:
        return "not run"
    if any(r["sha256"] == digest and r["outcome"] != "passed" for r in last.values()):
        return "failed"
    if any(r["sha256"] != digest for r in last.values()):
        return "stale"
    if len(last) < len(set(tests)):
        return "not run"
    return "passed"


def entries(ledger: dict, rel: str, digest: str | None) -> list[dict]:
    """One entry per (checker, host) that checks ``rel``: outcome, date and commit of the newest run,
    and whether a host image came from an unverified index."""
    record = ledger.get("snippets", {}).get(rel, {})
    checks = record.get("checks", [])
    runs = record.get("runs", [])
    found = []
    for checker, host in sorted({(c["checker"], host_name(c.get("host"))) for c in checks}):
        tests = sorted({c["test"] for c in checks
                        if c["checker"] == checker and host_name(c.get("host")) == host})
        mine = [r for r in runs if r["checker"] == checker and host_name(r.get("host")) == host
                and r["test"] in tests]
        newest = max(mine, key=lambda r: r.get("date", ""), default={})
        found.append({"checker": checker, "host": host, "outcome": outcome(tests, mine, digest),
                      "date": newest.get("date"), "commit": newest.get("commit"),
                      "index_unverified": any(r.get("index", "verified") != "verified" for r in mine)})
    return found


def checked_on(found: list[dict]) -> tuple[str, str] | None:
    """(date, commit) of the newest run among entries, for the line under a snippet; None if none ran."""
    dated = [e for e in found if e.get("date")]
    if not dated:
        return None
    newest = max(dated, key=lambda e: e["date"])
    return newest["date"], newest.get("commit") or "?"


def record_checks(ledger: dict, coverage: dict[str, list[dict]], *, complete: bool) -> None:
    """Coverage from a collection. ``complete``: the whole suite was collected, so coverage is replaced
    and runs of tests that no longer exist are dropped; otherwise the collected tests' entries are
    replaced and the others kept."""
    snippets = ledger.setdefault("snippets", {})
    collected = {c["test"] for checks in coverage.values() for c in checks}
    for record in snippets.values():
        keep = [] if complete else [c for c in record.get("checks", []) if c["test"] not in collected]
        record["checks"] = keep
    for rel, checks in coverage.items():
        record = snippets.setdefault(rel, {"checks": [], "runs": []})
        record["checks"] = sorted(record["checks"] + checks, key=lambda c: (c["checker"], c["test"]))
    if complete:  # a run no current check stands for (a test removed, a checker renamed) is forgotten
        for record in snippets.values():
            current = {(c["checker"], c.get("host"), c["test"]) for c in record["checks"]}
            record["runs"] = [r for r in record.get("runs", [])
                              if (r["checker"], r.get("host"), r["test"]) in current]
    for rel in [r for r, rec in snippets.items() if not rec.get("checks") and not rec.get("runs")]:
        del snippets[rel]


def record_runs(ledger: dict, runs: list[dict]) -> None:
    """Results of a run: each replaces the earlier result of the same (snippet, checker, host, test)."""
    snippets = ledger.setdefault("snippets", {})
    for run in runs:
        rel = run.pop("snippet")
        record = snippets.setdefault(rel, {"checks": [], "runs": []})
        key = (run["checker"], run.get("host"), run["test"])
        record["runs"] = sorted([r for r in record.get("runs", [])
                                 if (r["checker"], r.get("host"), r["test"]) != key] + [run],
                                key=lambda r: (r["checker"], host_name(r.get("host")), r["test"]))


def drop_missing(ledger: dict, root: Path) -> None:
    """Forget snippets that no longer exist."""
    snippets = ledger.setdefault("snippets", {})
    for rel in [r for r in snippets if not (root / r).is_file()]:
        del snippets[rel]


def provenance(root: Path = ROOT) -> dict:
    """Today's date (UTC) and the commit checked out, with "+" when the work tree had changes."""
    date = time.strftime("%Y-%m-%d", time.gmtime())
    try:
        head = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"date": date, "commit": "unknown"}
    return {"date": date, "commit": head + ("+" if dirty else "")}
