"""Negative cases: the one model of what must fail, read from the files and tests that say so.

A check that cannot fail proves nothing, so each checker keeps cases it must reject. Before this module they came
in five mechanisms, each with its own way of saying what it negates, and ``where`` guessed at the link:

1. **Bad files of a static checker**: ``checks/<chapter>/bad/**`` matched by a ``bad`` glob of a static checker in
   zrunbook/checkers.toml. checks/test_static_checkers.py runs the checker's validator on each and wanted at least
   one problem, any problem.
2. **Bad files a test hands to a program**: the rest of ``checks/**/bad/**`` (an httpd.conf for ``httpd -t``, a
   SunPKCS11 configuration, a wsadmin script for the Jython fake, a udev rule, a mdevctl JSON definition), read by
   a test on a container host or by a chapter's own static test, which asserts the program's message. Nothing
   but that test's source said which snippet such a file stands for.
3. **The facts loader's bad tables**: ``checks/facts_bad/*.csv``, the mistakes zrunbook/facts.py's schema and
   source rule refuse, each asserted with its exact message in checks/test_facts.py.
4. **The errata's columns**: facts/errata/errata.csv gives each erratum with a checker a ``bad form`` (a bad file
   of mechanism 1 or 2) and a ``negative test``; checks/errata/test_errata.py runs the bad form through the
   checker and looks for the negative test.
5. **Negative tests written inside a test module**: a test that breaks something on a host (a weakened target,
   a PIN file left with the old PIN, key caching left on) and asserts that the snippet's check fails. The pages'
   outcome boxes name some of them (``{outcome}``'s ``:negative:`` option, zrunbook/guide/outcomes.py); most are
   known only by a name that says ``fails``, ``refuses``, ``rejects`` and the like.

The model (ComplianceAsCode's test scenarios, whose ``*.fail.sh`` files say in their own header what they test):

* **A bad file declares itself** in a header, in its own comment syntax, at the top of the file (after a ``#!``
  line or an XML declaration)::

      # negates: crypto/token/init-token.sh
      # checker: shellcheck
      # rejects: SC2086

  ``negates`` names the snippets it stands for (paths or globs under snippets/, blank-separated; each must match
  a snippet; a checker's every file, ``**/*.sh``, where the case is the checker's own). ``checker`` names a checker
  of zrunbook/checkers.toml, or ``invariant`` for a project rule no snippet checker stands for (the facts tables'
  schema, no PIN printed), whose file may negate a facts table (``facts/...``); a file two checkers run has a
  ``checker`` line for each, each followed by its own lines. ``rejects`` is a fragment of what must happen: for a
  static checker, text that one of the validator's problems contains (checks/test_static_checkers.py runs the
  validator and compares); otherwise text the test asserts, found in the test's module or a checks/ module it
  imports (a test that reads its declaration with ``declaration()`` asserts what that says). ``test`` names the
  test that runs the file (``checks/x/test_y.py::test_z``); every file a host checker or an invariant runs names
  one. The comment syntax is ``#`` for shell, configuration, Python, YAML, TOML, INI and properties files, ``--``
  for Db2 CLP scripts and ``<!-- ... -->`` for XML (``COMMENT``).
* **A file that cannot carry a header** is declared in checks/negatives.toml instead, one table per file keyed by
  its path under checks/, with the same keys (``checker`` a list when more than one runs it; ``rejects`` and
  ``test`` then lists of the same length): formats without comments (JSON, CSV, recorded command output,
  Prometheus metrics text whose parser is the check) and files a test takes apart (the vfio-ap hostdev XML, whose
  test drops only the first comment). ``part-of`` declares a file read only beside another bad file (a bench
  run's ``machine.csv`` beside its ``summary.csv``): that file's declaration stands for both.
* **A negative test declares itself** with ``@pytest.mark.negative("snippet/path", expects="...")``: the snippets
  whose check it makes fail and what must happen. Every test an outcome box names in ``:negative:`` carries it
  with the box's snippet (checks/test_negatives.py). A test that negates no snippet but a rule of the project's
  own (the harness, the mirror lock, the invariants, ``where``, the ledger) says which rule instead, as a bad
  file's ``checker: invariant`` does: ``@pytest.mark.negative(invariant="the rule", expects="...")``.
  The snippets a mark names are ones the test checks (``@pytest.mark.snippet``) or runs on its way
  (``@pytest.mark.uses``: a finding about a step it does not judge). ``unmarked()`` lists the tests negative by name
  that declare nothing (no mark, and no bad file names them as its ``test``); checks/test_negatives.py holds it
  empty, so a test negative only by accident of its name is renamed.
* **The registry and the errata point at the declarations**: a static checker's ``bad`` globs match exactly the
  files whose header names that checker, and an erratum's ``bad form`` declares the erratum's checker
  (checks/test_negatives.py).

``declarations()`` reads every bad file's declaration, ``problems()`` says what is wrong with them, ``of(rel)``
lists the negatives of one snippet for ``where`` (with the erratum whose ``bad form`` a file is). Read from files
only; nothing runs and nothing is imported from checks/.
"""

from __future__ import annotations

import ast
import csv
import functools
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from zrunbook import ROOT, SNIPPETS
from zrunbook.snippets import expand

CHECKS = ROOT / "checks"
MANIFEST = CHECKS / "negatives.toml"
KEYS = ("negates", "checker", "rejects", "test", "part-of")
# The checker of a project rule no snippet checker stands for (the facts tables' schema, no PIN printed): its bad
# file names the test that holds the rule, and may negate a facts table (facts/...) instead of a snippet.
INVARIANT = "invariant"
# The comment that opens a header line, by suffix; a suffix not here is declared in the manifest.
COMMENT = {".sh": "#", ".conf": "#", ".cfg": "#", ".cnf": "#", ".py": "#", ".rules": "#", ".security": "#",
           ".options": "#", ".toml": "#", ".yml": "#", ".ini": "#", ".clp": "--", ".xml": "<!--"}
HEADER = re.compile(r"^\s*(?:#|--|<!--)\s*(negates|checker|rejects|test):\s*(.*?)\s*(?:-->)?\s*$")
# A test whose name says it expects a failure.
NEGATIVE_NAME = re.compile(r"negative|refuse|reject|fail|broken|wrong|stops|bad_")
OWN_TESTS = "checks/test_negatives.py"  # the model's own tests, negative by name but about headers, not snippets


@dataclass(frozen=True)
class Expect:
    checker: str
    rejects: str = ""  # a fragment of what must happen ("" when not said)
    test: str = ""  # the test that runs the file, checks/x/test_y.py::test_z


@dataclass(frozen=True)
class BadFile:
    path: str  # under checks/, e.g. static/bad/chkconfig-runlevel-placeholder.sh
    negates: tuple[str, ...]  # snippet paths or globs under snippets/
    expects: tuple[Expect, ...]
    where: str  # "header" or "manifest"
    errors: tuple[str, ...] = field(default=())  # what the header itself gets wrong (a key twice, an unknown key)
    part_of: str = ""  # a file read only with another bad file (a bench run's machine.csv): that file's path


def bad_files(checks: Path = CHECKS) -> list[str]:
    """Every negative-case file under checks/: in a ``bad`` folder at any depth, or in ``facts_bad``."""
    return sorted(p.relative_to(checks).as_posix() for p in checks.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
                  and ({"bad", "facts_bad"} & set(p.relative_to(checks).parts[:-1])))


def header(text: str) -> tuple[dict[str, str], list[Expect], list[str]]:
    """The header lines at the top of a file (after a #! line or an XML declaration): ``negates`` and the
    expectations, plus what is wrong with the header itself."""
    lines = text.splitlines()
    start = 1 if lines and (lines[0].startswith("#!") or lines[0].startswith("<?xml")) else 0
    found: dict[str, str] = {}
    expects: list[dict[str, str]] = []
    errors = []
    for line in lines[start:]:
        m = HEADER.match(line)
        if not m:
            break
        key, value = m.groups()
        if key == "negates":
            if "negates" in found:
                errors.append("negates is given twice")
            found["negates"] = value
        elif key == "checker":
            expects.append({"checker": value})
        elif not expects:
            errors.append(f"{key} comes before any checker line")
        elif key in expects[-1]:
            errors.append(f"{key} is given twice for checker {expects[-1]['checker']}")
        else:
            expects[-1][key] = value
    return found, [Expect(**e) for e in expects], errors


@functools.cache
def manifest(path: Path = MANIFEST) -> dict[str, dict]:
    if not path.is_file():
        return {}
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _from_manifest(rel: str, entry: dict) -> BadFile:
    errors = [f"unknown key {k!r} in checks/{MANIFEST.name}" for k in entry if k not in KEYS]
    checkers = entry.get("checker", [])
    checkers = [checkers] if isinstance(checkers, str) else list(checkers)

    def column(key: str) -> list[str]:
        value = entry.get(key, [""] * len(checkers) if len(checkers) != 1 else "")
        values = [value] if isinstance(value, str) else list(value)
        if len(values) != len(checkers):
            errors.append(f"{key} has {len(values)} values for {len(checkers)} checker(s)")
            values = (values + [""] * len(checkers))[:len(checkers)]
        return values

    expects = tuple(Expect(c, r, t) for c, r, t in zip(checkers, column("rejects"), column("test"), strict=True))
    negates = entry.get("negates", "")
    return BadFile(rel, tuple(negates.split() if isinstance(negates, str) else negates), expects, "manifest",
                   tuple(errors), entry.get("part-of", ""))


def declaration(rel: str, checks: Path = CHECKS, listed: dict | None = None) -> BadFile:
    """The declaration of one bad file (path under checks/): its header, or its manifest entry."""
    listed = manifest() if listed is None else listed
    if rel in listed:
        return _from_manifest(rel, listed[rel])
    found, expects, errors = header((checks / rel).read_text(encoding="utf-8", errors="replace"))
    return BadFile(rel, tuple(found.get("negates", "").split()), tuple(expects), "header", tuple(errors))


@functools.cache
def declarations() -> tuple[BadFile, ...]:
    return tuple(declaration(rel) for rel in bad_files())


def problems(bad: BadFile, checkers: dict[str, dict], snippets: Path = SNIPPETS, checks: Path = CHECKS,
             listed: dict | None = None) -> list[str]:
    """What is wrong with one declaration, without running anything: no header, a snippet that does not exist, a
    checker not in the registry, a host checker's file without its test, a test that does not exist."""
    where = f"checks/{bad.path}"
    out = [f"{where}: {e}" for e in bad.errors]
    suffix = Path(bad.path).suffix
    if bad.where == "header" and suffix not in COMMENT:
        out.append(f"{where}: a {suffix or 'suffix-less'} file has no comment syntax here: declare it in "
                   f"checks/{MANIFEST.name}")
    if bad.part_of:
        other = checks / bad.part_of
        if not other.is_file() or bad.part_of not in bad_files(checks):
            out.append(f"{where}: part-of names {bad.part_of}, which is no bad file under checks/")
        elif not declaration(bad.part_of, checks, listed).expects:
            out.append(f"{where}: part-of names {bad.part_of}, which declares nothing")
        return out
    if not bad.negates and not bad.expects:
        return [*out, f"{where}: no negative-case header (negates:, checker:, rejects:; see zrunbook/negatives.py)"]
    if not bad.negates:
        out.append(f"{where}: names no snippet it negates (negates:)")
    out += [f"{where}: negates {p!r}, which matches no file under snippets/" for p in bad.negates
            if not (expand(p.removeprefix("facts/"), snippets.parent / "facts") if p.startswith("facts/")
                    else expand(p, snippets))]
    if not bad.expects:
        out.append(f"{where}: names no checker (checker:)")
    for e in bad.expects:
        entry = {"kind": "host"} if e.checker == INVARIANT else checkers.get(e.checker)
        if entry is None:
            out.append(f"{where}: checker {e.checker!r} is not in zrunbook/checkers.toml")
            continue
        if entry["kind"] == "host" and not e.test:
            out.append(f"{where}: {e.checker} runs in a test: name the test that runs the file (test:)")
        if entry["kind"] == "static" and not e.rejects:
            out.append(f"{where}: say what {e.checker} must report (rejects:)")
        if e.test:
            out += [f"{where}: {p}" for p in node_problems(e.test, checks)]
            if e.rejects and entry["kind"] == "host" and not _asserts(e.test, e.rejects, checks):
                out.append(f"{where}: rejects {e.rejects!r} is in neither {e.test.split('::')[0]} nor a checks/ "
                           "module it imports, one of which must assert it")
    return out


def rejection_problem(bad: BadFile, checker: str, found: list[str]) -> str | None:
    """What is wrong with a static checker's problems for a bad file, against its declaration: the checker accepted
    it, the file does not declare the checker, or no problem contains the header's ``rejects`` text."""
    if not found:
        return f"{checker} accepted checks/{bad.path}"
    said = [e.rejects for e in bad.expects if e.checker == checker]
    if not said:
        return f"checks/{bad.path} does not declare checker {checker} (add checker: {checker} and rejects:)"
    if not [p for p in found if said[0] in p]:
        return (f"{checker} rejected checks/{bad.path}, but none of its problems contains {said[0]!r} (the header's "
                f"rejects:): {found}")
    return None


def _source(test: str, checks: Path = CHECKS) -> str:
    path = checks.parent / test.split("::")[0]
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _asserts(test: str, fragment: str, checks: Path = CHECKS) -> bool:
    """Whether the test's module, or a checks/ module it imports (where a table of expected messages may live),
    holds the fragment; a test that reads its declarations (``negatives.declaration``) asserts what they say."""
    source = _source(test, checks)
    if "negatives.declaration(" in source:
        return True
    texts = [source]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("checks."):
            path = checks.parent / Path(*node.module.split(".")).with_suffix(".py")
            texts += [path.read_text(encoding="utf-8")] if path.is_file() else []
    return any(fragment in text for text in texts)


def node_problems(test: str, checks: Path = CHECKS) -> list[str]:
    """A test node id that names no file or no function in it."""
    file, _, name = test.partition("::")
    source = _source(test, checks)
    if not source:
        return [f"test {test}: no file {file}"]
    name = name.split("[")[0]
    if name and name not in {n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)}:
        return [f"test {test}: {file} defines no {name}"]
    return []


# --- negative tests written inside a test module -------------------------------------------------------------

@dataclass(frozen=True)
class NegativeTest:
    test: str  # checks/x/test_y.py::test_z
    snippets: tuple[str, ...]  # from @pytest.mark.negative(...); () when the test carries none
    expects: str  # every mark's, joined
    per_mark: tuple[tuple[tuple[str, ...], str], ...] = ()  # (the mark's snippets, its expects), mark by mark
    invariant: str = ""  # the project's own rule a mark with invariant= negates ("" for a snippet's negative)

    def expects_for(self, snippet: str) -> str:
        """What the mark naming snippet expects (a test negative for two snippets says it once for each)."""
        return next((said for named, said in self.per_mark if snippet in named), self.expects)


def _marks(func: ast.FunctionDef) -> list[ast.Call]:
    return [d for d in func.decorator_list if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
            and d.func.attr == "negative" and getattr(d.func.value, "attr", "") == "mark"]


@functools.cache
def negative_tests(checks: Path = CHECKS) -> tuple[NegativeTest, ...]:
    """Every test function that carries a ``negative`` mark or whose name says it expects a failure (ast, literal
    arguments only)."""
    found = []
    for path in sorted(checks.rglob("test_*.py")):
        rel = path.relative_to(checks.parent).as_posix()
        if rel == OWN_TESTS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in [*tree.body, *(n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body)]:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            marks = _marks(node)
            if not marks and not NEGATIVE_NAME.search(node.name):
                continue
            snippets = tuple(a.value for m in marks for a in m.args if isinstance(a, ast.Constant))
            per_mark = tuple((tuple(a.value for a in m.args if isinstance(a, ast.Constant)),
                              " ".join(kw.value.value for kw in m.keywords
                                       if kw.arg == "expects" and isinstance(kw.value, ast.Constant)))
                             for m in marks)
            expects = "; ".join(said for _named, said in per_mark if said)
            invariant = "; ".join(kw.value.value for m in marks for kw in m.keywords
                                  if kw.arg == INVARIANT and isinstance(kw.value, ast.Constant))
            found.append(NegativeTest(f"{rel}::{node.name}", snippets, expects, per_mark, invariant))
    return tuple(found)


@functools.cache
def uses_marks(checks: Path = CHECKS) -> dict[str, frozenset[str]]:
    """Test function -> the snippet patterns its ``@pytest.mark.uses`` marks name (on the function and in its module's
    ``pytestmark``; ast, literal arguments only): a negative may name a snippet the test runs without judging it."""
    found: dict[str, frozenset[str]] = {}
    for path in sorted(checks.rglob("test_*.py")):
        rel = path.relative_to(checks.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = {a.value for n in tree.body if isinstance(n, ast.Assign)
                  and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
                  for c in ast.walk(n.value) if isinstance(c, ast.Call) and getattr(c.func, "attr", "") == "uses"
                  for a in c.args if isinstance(a, ast.Constant)}
        for node in [*tree.body, *(n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body)]:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                own = {a.value for d in node.decorator_list if isinstance(d, ast.Call)
                       and getattr(d.func, "attr", "") == "uses" for a in d.args if isinstance(a, ast.Constant)}
                if own | module:
                    found[f"{rel}::{node.name}"] = frozenset(own | module)
    return found


def unmarked(checks: Path = CHECKS) -> list[str]:
    """The tests negative by name that declare nothing: no ``@pytest.mark.negative`` naming a snippet or an
    invariant, and no bad file's header names them as its ``test``."""
    bads = declarations() if checks == CHECKS else tuple(declaration(r, checks, listed={}) for r in bad_files(checks))
    named = {e.test.split("[")[0] for bad in bads for e in bad.expects if e.test}
    return [t.test for t in negative_tests(checks) if not t.snippets and not t.invariant and t.test not in named]


# --- what where lists --------------------------------------------------------------------------------------------

@functools.cache
def _expanded(pattern: str) -> frozenset[str]:
    return frozenset(expand(pattern))


def _matches(patterns: tuple[str, ...], rel: str) -> bool:
    return any(rel == p or rel in _expanded(p) for p in patterns)


@functools.cache
def errata() -> dict[str, tuple[str, ...]]:
    """Bad file (under checks/) -> the errata (facts/errata/errata.csv) whose ``bad form`` it is."""
    table = ROOT / "facts" / "errata" / "errata.csv"
    found: dict[str, list[str]] = {}
    if table.is_file():
        with table.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if row.get("bad form"):
                    found.setdefault(row["bad form"].removeprefix("checks/"), []).append(row["id"])
    return {k: tuple(v) for k, v in found.items()}


def of(rel: str) -> list[str]:
    """The negatives of one snippet, one line each: the bad files that name it (or a glob matching it) and the
    tests marked negative for it."""
    lines = []
    # the files that name this snippet first, then those that stand for a glob of snippets (a checker's every file)
    for bad in sorted(declarations(), key=lambda b: rel not in b.negates):
        if _matches(bad.negates, rel):
            for e in bad.expects:
                said = f" ({e.rejects})" if e.rejects else ""
                named = f" (erratum {', '.join(errata()[bad.path])})" if bad.path in errata() else ""
                lines.append(f"{e.checker} rejects checks/{bad.path}{said}" + (f" in {e.test}" if e.test else "")
                             + named)
    for t in negative_tests():
        if _matches(t.snippets, rel):
            lines.append(f"{t.test} fails" + (f": {t.expects}" if t.expects else ""))
    return lines
