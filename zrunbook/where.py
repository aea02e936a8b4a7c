"""``python -m zrunbook where PATH``: everything about one snippet, or what one test checks, in one place.

For a snippet (``crypto/token/init-token.sh`` or ``snippets/crypto/token/init-token.sh``): the pages that show it
(file and line, and whether as a snippet or an outcome check), the checks that cover it (checker, what kind of
evidence, host, test: zrunbook/declarations.tsv) with this checkout's result when ``make check`` ran, the negative
cases (the bad files and tests that declare it, zrunbook/negatives.py, and which outcome box names each), the facts
tables the checking code names, the prepared states whose key covers it, and the tests whose last run here read
it (observed: checks/observe.py records every test's reads in build/results.json), marked when they do not declare
it. For a test (``checks/x/test_y.py`` or
``checks/x/test_y.py::test_z``): the snippets it checks, with checker and host.

Read from files only (the pages, the declarations, the registry, the facts folder and the sources of the validators,
tests and prepared states): nothing is imported from checks/ and nothing runs. ``report(path)`` returns the text.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from zrunbook import ROOT, ledger, negatives, registry
from zrunbook.guide.outcomes import declared
from zrunbook.snippets import all_snippets, digest

DOCS = ROOT / "docs"
FACTS = ROOT / "facts"
CHECKS = ROOT / "checks"
SHOWN = re.compile(r"^(?:`{3,}|:{3,})\{(snippet|outcome)\}[ \t]+(\S+)[ \t]*$", re.M)


@dataclass(frozen=True)
class StateDecl:
    name: str  # the State's name, as in its image tag
    defined_in: str  # the file that declares it
    snippets: tuple[str, ...]  # folders or files under snippets/ its key covers


@functools.cache
def _directives() -> tuple[tuple[str, str, int, str], ...]:
    """Every snippet or outcome directive of the guide: (snippet, page docname, line, kind)."""
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        docname = page.relative_to(DOCS).with_suffix("").as_posix()
        out += [(m.group(2), docname, text.count("\n", 0, m.start()) + 1, m.group(1)) for m in SHOWN.finditer(text)]
    return tuple(out)


def shown_on(rel: str) -> list[tuple[str, int, str]]:
    """(page docname, line, "snippet" or "outcome") for every directive naming the snippet."""
    return [(page, line, kind) for snippet, page, line, kind in _directives() if snippet == rel]


@functools.cache
def states() -> tuple[StateDecl, ...]:
    """Every ``State("name", ..., snippets=(...))`` written in the project's Python, read with ast (literal names
    and snippet tuples; a State built in a function, like the walkthrough states, is listed by its file)."""
    found = []
    for path in sorted((*(ROOT / "zrunbook").rglob("*.py"), *CHECKS.rglob("*.py"))):
        if "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "State" and node.args:
                first = node.args[0]
                name = first.value if isinstance(first, ast.Constant) else f"(made in {path.name})"
                folders: tuple[str, ...] = ()
                for kw in node.keywords:
                    if kw.arg == "snippets" and isinstance(kw.value, ast.Tuple):
                        folders = tuple(e.value for e in kw.value.elts if isinstance(e, ast.Constant))
                found.append(StateDecl(str(name), path.relative_to(ROOT).as_posix(), folders))
    return tuple(found)


def _covers(folders: tuple[str, ...], rel: str) -> bool:
    return any(rel == f or rel.startswith(f.rstrip("/") + "/") for f in folders)


def facts_named(sources: list[Path]) -> list[str]:
    """The facts tables (facts/**.csv) whose path, or whose name in quotes, appears in these source files."""
    tables = sorted(FACTS.rglob("*.csv"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in sources if p.is_file())
    out = []
    for table in tables:
        rel = table.relative_to(FACTS).as_posix()
        if f"facts/{rel}" in text or re.search(rf"[\"']{re.escape(rel)}[\"']|[\"']{re.escape(table.stem)}[\"']", text):
            out.append(f"facts/{rel}")
    return out


def _validator_file(spec: dict) -> Path | None:
    module = spec.get("validator", "").split(":")[0]
    path = ROOT / Path(*module.split(".")).with_suffix(".py") if module else None
    return path if path and path.is_file() else None


def _test_file(test: str) -> Path:
    return ROOT / test.split("::")[0]


def negatives_of(rel: str) -> list[str]:
    """The snippet's negative cases as the files and tests declare them (zrunbook/negatives.py): the bad files whose
    header names it, the tests marked negative for it, and which of those an outcome box on a page names."""
    boxes = {test: o.page for o in declared(DOCS) if o.snippet == rel for test in o.negatives}
    return [line + (f" (named by the outcome check on {boxes[line.split(' ')[0]]})"
                    if line.split(" ")[0] in boxes else "") for line in negatives.of(rel)]


@dataclass(frozen=True)
class Where:
    snippet: str
    pages: list[tuple[str, int, str]]  # docname, line, snippet|outcome
    checks: list[dict]  # checker, evidence, host, test, result (None when make check did not run here)
    negatives: list[str]
    facts: list[str]
    states: list[StateDecl]
    observed: list[dict] | None = None  # test, outcome, declared: tests whose last run here read it; None: no run


def observed_by(rel: str, declared_tests: set[str], results: Path | None = None) -> list[dict] | None:
    """The tests whose last run on this machine read the snippet (checks/observe.py records each test's reads in
    build/results.json), each with its outcome and whether it also declares the snippet; None when no run here
    recorded what it read."""
    path = results or ledger.RESULTS
    inputs = ledger.load(path).get("inputs") if path.is_file() else None
    if not inputs:
        return None
    return [{"test": node, "outcome": read.get("outcome"), "declared": ledger.test_id(node) in declared_tests}
            for node, read in sorted(inputs.items()) if rel in read.get("snippets", {})]


def where(rel: str) -> Where:
    """Everything about one snippet (under snippets/), from the files named in the module's docstring."""
    checkers = registry.load(deep=False)
    declared_checks = ledger.load_declarations().get(rel, [])
    ran = ledger.RESULTS.is_file()
    outcome = {(e["checker"], e["host"]): e["outcome"]
               for e in ledger.entries(ledger.read(ledger.RESULTS), rel, digest(rel))} if ran else {}
    checks = []
    for check in sorted(declared_checks, key=lambda c: (c["checker"], ledger.host_name(c.get("host")), c["test"])):
        host = ledger.host_name(check.get("host"))
        evidence = registry.evidence(check["checker"]) or "?"  # the badge's words, with the program that ran
        checks.append({"checker": check["checker"], "evidence": evidence, "host": host, "test": check["test"],
                       "result": outcome.get((check["checker"], host), "not run") if ran else None,
                       "why": check.get("why")})
    negatives = negatives_of(rel)
    sources = [p for p in {*(_validator_file(checkers.get(c["checker"], {})) for c in checks),
                           *(_test_file(c["test"]) for c in checks)} if p]
    return Where(rel, shown_on(rel), checks, negatives, facts_named(sources),
                 [s for s in states() if _covers(s.snippets, rel)], observed_by(rel, {c["test"] for c in checks}))


def snippet_report(rel: str) -> list[str]:
    w = where(rel)
    ran = any(c["result"] is not None for c in w.checks)
    lines = [f"snippets/{rel}", "", "shown on:"]
    lines += [f"  docs/{page}.md:{line} ({kind})" for page, line, kind in w.pages] or \
        ["  (no page: an orphan, which the guide build refuses)"]
    lines += ["", "checked by (checker · evidence · host · test" + (" · result)" if ran else ")")]
    lines += [f"  {c['checker']} · {c['evidence']} · {c['host']} · {c['test']}"
              + (f" · {c['result']}" if c["result"] is not None else "")
              + (f" (on s390x because {c['why']})" if c.get("why") else "") for c in w.checks]
    if not w.checks:
        lines.append("  (none declared: make check fails until a test marks it, then run make declarations)")
    if not ledger.RESULTS.is_file():
        lines.append(f"  results: not run in this build (make check writes {ledger.RESULTS.relative_to(ROOT)})")
    lines += ["", "read by (what the last run here observed: test · outcome; * not declared by the test):"]
    if w.observed is None:
        lines.append(f"  (not run in this build: make check records each test's reads in "
                     f"{ledger.RESULTS.relative_to(ROOT)})")
    else:
        lines += [f"  {o['test']} · {o['outcome']}{'' if o['declared'] else ' *'}" for o in w.observed] or \
            ["  (no test read it in the last run here)"]
    lines += ["", "negative cases:", *([f"  {n}" for n in w.negatives] or ["  (none named)"])]
    lines += ["", "facts tables named by its checkers and tests:", *([f"  {t}" for t in w.facts] or ["  (none)"])]
    lines += ["", "prepared states whose key covers it (a change makes them again):",
              *([f"  {s.name} ({s.defined_in})" for s in w.states] or ["  (none)"])]
    return lines


def test_report(test: str) -> list[str]:
    wanted = test.rstrip("/")
    found = []
    for rel, checks in ledger.load_declarations().items():
        for check in checks:
            node = check["test"]
            if node == wanted or node.startswith(wanted + "::") or node.split("[")[0] == wanted:
                found.append(f"  snippets/{rel} · {check['checker']} · {ledger.host_name(check.get('host'))} · {node}"
                             + (f" (on s390x because {check['why']})" if check.get("why") else ""))
    return [wanted, "", "checks:", *(sorted(set(found)) or ["  (no snippet: the test declares none)"])]


def report(path: str) -> str:
    """The text ``where`` prints for a snippet or a test; ValueError when PATH is neither."""
    rel = path.removeprefix("snippets/")
    if rel in all_snippets():
        return "\n".join(snippet_report(rel))
    if path.startswith("checks/") and _test_file(path).is_file():
        return "\n".join(test_report(path))
    raise ValueError(f"{path} is neither a file under snippets/ nor a test under checks/")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m zrunbook where PATH (a snippet, crypto/token/init-token.sh, or a test, "
              "checks/x/test_y.py[::test_z])", file=sys.stderr)
        return 2
    try:
        print(report(argv[0]))
    except ValueError as exc:
        print(f"zrunbook where: {exc}", file=sys.stderr)
        return 2
    return 0
