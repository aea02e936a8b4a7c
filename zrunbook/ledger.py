"""What is declared and what happened: which check covers each snippet, and how its last check went.

Two files, read together (``read()``):

* the declarations, ``zrunbook/declarations.tsv``, committed: one line per (snippet, checker, host, test), the
  coverage of the whole suite on every host as pytest collects it (checks/zrunbook_plugin.py). Only
  ``make declarations`` writes it (a collection, no test runs); a whole-suite ``make check`` fails its
  ``declarations-are-current`` item, naming that command, when the file no longer matches the collection. So
  it changes only with coverage, and a fresh clone's guide knows every snippet's checkers and hosts.
* the results, ``build/results.json`` (``RESULTS``), never committed: ``make check`` writes it at the end of
  each run (the pytest plugin is its only writer), a narrowed run merges into it. A fresh clone has none:
  every badge then says "not run" ("not run in this build"), never "passed".

The guide's badges, the deployer's bundle and ``python -m zrunbook outcome`` all ask ``entries()`` over
``read()``, whose checks are the declarations and whose runs are the results, so a page and a manifest never
disagree; a result of a test the declarations no longer name counts for nothing.

Results format (``"format": 1``)::

    {"format": 1, "snippets": {"crypto/x.sh": {
        "checks": [{"checker": "shellcheck", "host": null, "test": "checks/...::test_x"}],
        "runs":   [{"checker": "shellcheck", "host": null, "test": "checks/...::test_x", "outcome": "passed",
                    "sha256": "...", "date": "2026-11-23", "commit": "f11b611", "index": "unverified: ..."}]}}}

``checks`` there is the coverage the runs collected (it decides which earlier runs a whole-suite run forgets).
``host`` is a container host's name, or null for a static checker. ``index`` appears only when the host
image was built from a Debian index that did not match the signed Release (checks/hosts/mirror.py).

Declarations format: a comment line, then ``snippet<TAB>checker<TAB>host<TAB>test`` sorted, host ``static``
for a static checker: one line per declaration, so two branches that add snippets merge without a conflict.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from zrunbook import BUILD, ROOT

RESULTS = BUILD / "results.json"  # written by make check, read by the guide and the bundle
DECLARATIONS = Path(__file__).with_name("declarations.tsv")  # committed; written by make declarations
REGENERATE = "make declarations"
FORMAT = 1
STATIC = "static"
OUTCOMES = ("passed", "failed", "stale", "not run")


def test_id(nodeid: str) -> str:
    """A test's id as the declarations name it: without the ``@group`` that pytest-xdist's ``--dist loadgroup`` adds
    to the id of a test marked ``xdist_group`` (the same split as xdist's own: an ``@`` after the last ``]``)."""
    at = nodeid.rfind("@")
    return nodeid[:at] if at > nodeid.rfind("]") else nodeid


def load(path: Path = RESULTS) -> dict:
    """The results at path; empty results when there are none. Results of another format are an error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"format": FORMAT, "snippets": {}}
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: results format {data.get('format')!r}, this library reads {FORMAT}")
    return data


def save(data: dict, path: Path = RESULTS) -> None:
    """Write the results beside the file and rename over it: a reader sees the old or the new, never half."""
    _replace(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _replace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


Coverage = dict[str, list[dict]]  # snippet -> [{"checker", "host" (None when static), "test"}]
HEADER = (f"# Which test checks which snippet with which checker on which host: written by `{REGENERATE}` "
          "(zrunbook/ledger.py), not by hand.\n")


def declaration_lines(coverage: Coverage) -> list[str]:
    """One line per check: snippet, checker, host, test, and for a check on the s390x host why it runs there
    (its ``arch_dependent`` reason: checks/hosts/plugin.py runs only such tests under qemu)."""
    return sorted({f"{rel}\t{c['checker']}\t{host_name(c.get('host'))}\t{c['test']}"
                   + (f"\t{c['why']}" if c.get("why") else "")
                   for rel, checks in coverage.items() for c in checks})


def save_declarations(coverage: Coverage, path: Path = DECLARATIONS) -> None:
    """The declarations file for a whole-suite collection: the same coverage always gives the same bytes."""
    _replace(path, HEADER + "".join(line + "\n" for line in declaration_lines(coverage)))


def load_declarations(path: Path = DECLARATIONS) -> Coverage:
    """The committed declarations; none when the file is missing (then every snippet shows "no checker")."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    coverage: Coverage = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) not in (4, 5):
            raise ValueError(f"{path}:{number}: expected snippet, checker, host, test (and why, for s390x) "
                             "separated by tabs")
        rel, checker, host, test, *why = fields
        coverage.setdefault(rel, []).append({"checker": checker, "host": None if host == STATIC else host,
                                             "test": test, **({"why": why[0]} if why else {})})
    return coverage


def outdated(collected: Coverage, declared: Coverage, limit: int = 10) -> list[str]:
    """How the declarations differ from a whole-suite collection: lines to add (+) and to drop (-)."""
    now, then = set(declaration_lines(collected)), set(declaration_lines(declared))
    diff = [f"+ {line}" for line in sorted(now - then)] + [f"- {line}" for line in sorted(then - now)]
    if len(diff) > limit:
        diff = diff[:limit] + [f"... and {len(diff) - limit} more"]
    return [d.replace("\t", "  ") for d in diff]


def view(results: dict, declared: Coverage) -> dict:
    """The ledger the readers ask ``entries()``: each snippet's declared checks with its recorded runs."""
    snippets = {rel: {"checks": list(checks), "runs": []} for rel, checks in declared.items()}
    for rel, record in results.get("snippets", {}).items():
        snippets.setdefault(rel, {"checks": [], "runs": []})["runs"] = list(record.get("runs", []))
    return {"format": FORMAT, "snippets": snippets}


def read(results: Path | None = RESULTS, declarations: Path = DECLARATIONS) -> dict:
    """The declarations with this checkout's results (``results=None``: the declarations alone, no run)."""
    return view(load(results) if results is not None else {}, load_declarations(declarations))


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
                      "index_unverified": any(r.get("index", "verified") != "verified" for r in mine),
                      "why": "; ".join(sorted({c["why"] for c in checks if c.get("why") and c["checker"] == checker
                                                and host_name(c.get("host")) == host}))})
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


def record_inputs(ledger: dict, inputs: dict[str, dict], *, complete: bool, kept: list[str] = ()) -> None:
    """What each test of a run read (checks/observe.py), by pytest node id: its outcome, the sha256 of each snippet,
    facts file, negative case and other file it opened, the images and states it started from, its code's digest,
    the date and the commit. Each replaces the same test's earlier entry; ``complete`` (the whole suite ran) forgets
    tests that did not run, except those in ``kept`` (their verdicts were reused: checks/reuse.py)."""
    before = ledger.get("inputs", {})
    old = {n: e for n, e in before.items() if n in set(kept)} if complete else before
    ledger["inputs"] = dict(sorted({**old, **inputs}.items()))


def mark_reused(ledger: dict, tests: list[str], stamp: dict) -> None:
    """The runs of these tests were not repeated: their last verdicts stand (checks/reuse.py). Each run says so
    with the date and commit of the run that reused it (``reused``); a run that ran again is a new entry without it
    (``record_runs``)."""
    wanted = set(tests)
    for record in ledger.get("snippets", {}).values():
        for run in record.get("runs", []):
            if run["test"] in wanted:
                run["reused"] = f"{stamp['date']} {stamp['commit']}"


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
