"""The import graph is docs -> zrunbook <- checks, and tests share code only through the library, the harness or
fixtures.

Every .py under zrunbook/, docs/_ext/ and checks/ is parsed (not imported) and its imports resolved to
repository modules. Reported, naming file and import:

* zrunbook or docs/_ext importing ``checks`` (the container-host harness, checks/hosts/, included);
* zrunbook (except the verify application, zrunbook/verify/, which builds on pytest-testinfra) or docs/_ext
  importing pytest, testinfra or xdist: the library the guide builds with has no test framework inside;
* a chapter package of the library (every package of zrunbook/ but those ``SHARED`` names) importing another
  chapter's package: what two chapters read lives in zrunbook/formats/ or a core module;
* any module importing a test module (``test_*.py``) or a conftest: shared code belongs in zrunbook/, in the
  harness or in a fixture;
* a folder of checks/ (a chapter's checks) importing another folder's module, except the harness (checks/hosts/),
  the stand-ins (checks/standins/) and the pytest plugins checks/conftest.py names in ``pytest_plugins``.

And the library holds the library (``standin_problems``): readers install zrunbook/ as a wheel, so a stand-in, a
program the checks run in place of a product they cannot run here, lives in checks/standins/. Reported:

* a program source of another language under zrunbook/ (C, C++, Java, Go, Rust: ``PROGRAM_SOURCES``), which only a
  check builds or runs on a host;
* a module of zrunbook/ that nothing but the checks reaches. Reached, from what the library is for: the guide's
  extensions and conf.py (their imports, and the modules they name in a string), every chapter's ``values`` module
  (the pages' ``{value}`` role), the ``:rows:`` functions the pages name, checkers.toml's validators, the package's
  command (zrunbook/__main__.py) and the modules the Makefile, tox.ini and pyproject.toml run or name; then, from
  each module reached, what it imports, its packages, and the modules it names in a string (a dotted name, or a file
  name of its own folder: the verify application hands pytest ``fleet.py`` so). The test-only modules that stand in
  for nothing are named, each with why, in ``TEST_HELPERS``; a name there that the library reaches, or that is gone,
  is reported too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from zrunbook import ROOT

TREES = ("zrunbook", "docs/_ext", "checks")
# The library's packages that serve more than one chapter; every other package of zrunbook/ is a chapter's, read from
# the tree, so a new chapter is held to the rule without a list to update.
SHARED = {
    "formats": "what more than one chapter reads",
    "guide": "the guide's outcome checks and the values its front page quotes",
    "static": "the static checkers that read every chapter's files",
    "verify": "the fleet application, which runs every chapter's checks",
}


def chapters(root: Path) -> set[str]:
    """The chapter packages: every package of zrunbook/ that SHARED does not name."""
    return {p.parent.name for p in (root / "zrunbook").glob("*/__init__.py")} - set(SHARED)
TEST_FRAMEWORKS = {"pytest", "_pytest", "testinfra", "xdist"}
HARNESS = "checks.hosts"
STANDINS = "checks.standins"
PROGRAM_SOURCES = {".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".java": "Java", ".go": "Go", ".rs": "Rust"}
# Modules of zrunbook/ that only the checks reach but that stand in for no product (they read, or fetch the real one).
TEST_HELPERS = {
    "zrunbook.shown_output": "the checks' comparison of a snippet's shown output with the output it gave",
    "zrunbook.crypto.token_flags": "the token-flags rules (facts/crypto/token-flags.csv) the openCryptoki checks apply",
    "zrunbook.db2.client_hello": "the parser of openssl s_server -msg output that proves what IBM's JDBC driver offers",
    "zrunbook.db2.jcc": "IBM's real JDBC driver, pinned and fetched from Maven Central (a product, not a stand-in)",
    "zrunbook.results.token_profile": "the reading of the token profile's measured data, for its checks",
}


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def plugins(root: Path) -> set[str]:
    """The modules checks/conftest.py lists in pytest_plugins."""
    conftest = root / "checks" / "conftest.py"
    if not conftest.exists():
        return set()
    for node in ast.parse(conftest.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["pytest_plugins"]:
            return set(ast.literal_eval(node.value))
    return set()


def imported(root: Path, path: Path) -> list[tuple[int, str]]:
    """(line, module) for each import in path that names a module of the repository's checks/ or zrunbook/
    trees, or any ``checks`` import at all; ``from package import module`` resolves to the module."""
    package = module_name(root, path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                is_module = (root / Path(*sub.split("."))).with_suffix(".py").exists() or (
                    root / Path(*sub.split(".")) / "__init__.py").exists()
                found.append((node.lineno, sub if is_module else module))
    return list(dict.fromkeys(found))  # one report per module and line, not per name imported


def is_test_module(module: str) -> bool:
    last = module.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


def layout_problems(root: Path) -> list[str]:
    allowed = plugins(root)
    chapter = chapters(root)
    problems = []
    for tree in TREES:
        for path in sorted((root / tree).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(root).as_posix()
            here = module_name(root, path).split(".")
            for line, module in imported(root, path):
                parts = module.split(".")
                where = f"{rel}:{line}: imports {module}"
                if parts[0] in TEST_FRAMEWORKS and tree != "checks" and here[:2] != ["zrunbook", "verify"]:
                    problems.append(f"{where}: the library and the guide never import a test framework "
                                    "(only zrunbook/verify/ may)")
                    continue
                if (parts[0] == "zrunbook" and len(here) > 2 and here[0] == "zrunbook" and here[1] in chapter
                        and len(parts) > 1 and parts[1] in chapter and parts[1] != here[1]):
                    problems.append(f"{where}: another chapter's package; share it through zrunbook/formats/ or a "
                                    "core module")
                    continue
                if parts[0] != "checks":
                    continue
                if tree != "checks":
                    problems.append(f"{where}: zrunbook and docs never import checks")
                elif is_test_module(module):
                    problems.append(f"{where}: a test module or conftest; share through zrunbook/ or a fixture")
                elif (len(here) > 2 and len(parts) > 2 and parts[1] != here[1] and module not in allowed
                      and not module.startswith((HARNESS + ".", STANDINS + "."))):
                    problems.append(f"{where}: another chapter's checks module")
    return problems


DOTTED = re.compile(r"zrunbook(?:\.\w+)+")
RUN_OR_NAMED = re.compile(r"-m (zrunbook(?:\.\w+)+)|(?<![\w/])(zrunbook/[\w/]+\.py)\b")


def library_modules(root: Path) -> dict[str, Path]:
    return {module_name(root, p): p for p in sorted((root / "zrunbook").rglob("*.py")) if "__pycache__" not in p.parts}


def strings(path: Path) -> list[str]:
    """The string constants of path's code; docstrings, which only mention, are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def named(root: Path, path: Path, modules: dict[str, Path]) -> set[str]:
    """The library modules path imports or names in a string (dotted, or a file name of its own folder)."""
    found = {m for _, m in imported(root, path)}
    for text in strings(path):
        found |= set(DOTTED.findall(text))
        if text.endswith(".py") and "/" not in text and (path.parent / text).is_file():
            found.add(module_name(root, path.parent / text))
    return found & set(modules)


def library_roots(root: Path, modules: dict[str, Path]) -> set[str]:
    """What the library is for, as modules: the guide's, the pages', the checkers', the commands'."""
    found = {"zrunbook.__main__"} | {m for m in modules if m.split(".")[-1] == "values"}
    for path in [root / "conf.py", *sorted((root / "docs" / "_ext").rglob("*.py"))]:
        if path.is_file():
            found |= named(root, path, modules)
    for page in sorted((root / "docs").rglob("*.md")):
        found |= {f"zrunbook.{m}" for m in re.findall(r"^:rows: ([\w.]+):", page.read_text(encoding="utf-8"), re.M)}
    checkers = root / "zrunbook" / "checkers.toml"
    if checkers.is_file():
        table = tomllib.loads(checkers.read_text(encoding="utf-8"))
        found |= {c["validator"].split(":")[0] for c in table.values() if isinstance(c, dict) and "validator" in c}
    for name in ("Makefile", "tox.ini", "pyproject.toml"):
        if (root / name).is_file():
            text = re.sub(r"#.*", "", (root / name).read_text(encoding="utf-8"))  # a comment only mentions
            for dotted, rel in RUN_OR_NAMED.findall(text):
                found.add(dotted or module_name(root, root / rel))
    return found & set(modules)


def reached(root: Path, modules: dict[str, Path]) -> set[str]:
    seen: set[str] = set()
    todo = sorted(library_roots(root, modules))
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [p for p in (".".join(parts[:i]) for i in range(1, len(parts))) if p in modules]
        todo += sorted(named(root, modules[module], modules))
    return seen


def standin_problems(root: Path, helpers: dict[str, str] = TEST_HELPERS) -> list[str]:
    modules = library_modules(root)
    library = reached(root, modules)
    problems = []
    for path in sorted((root / "zrunbook").rglob("*")):
        if path.is_file() and path.suffix in PROGRAM_SOURCES:
            problems.append(f"{path.relative_to(root).as_posix()}: a {PROGRAM_SOURCES[path.suffix]} source in the "
                            "library: a program only the checks build or run; it belongs in checks/standins/")
    for module, path in modules.items():
        if module not in library and module not in helpers:
            problems.append(f"{path.relative_to(root).as_posix()}: nothing but the checks reaches it (not the guide, "
                            "the pages, the checkers or the commands); a stand-in belongs in checks/standins/")
    for module in helpers:
        if module not in modules:
            problems.append(f"{module}: named in TEST_HELPERS, but the library has no such module")
        elif module in library:
            problems.append(f"{module}: named in TEST_HELPERS, but the library reaches it: drop it from the list")
    return problems


def test_the_library_holds_no_stand_in():
    assert standin_problems(ROOT) == []


def test_no_library_imports_checks_and_no_test_imports_another_test():
    assert layout_problems(ROOT) == []


def write(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.negative(invariant="the layout's import rules",
                      expects="each bad import is named with its file, line and the rule it breaks")
def test_layout_check_names_each_bad_import_with_its_file(tmp_path):
    write(tmp_path, "checks/conftest.py", 'pytest_plugins = ["checks.hosts.plugin"]\n')
    write(tmp_path, "checks/hosts/plugin.py")
    write(tmp_path, "checks/hosts/helper.py")
    write(tmp_path, "checks/ihs/test_a.py", "import checks.hosts.plugin\nfrom checks.ihs import helper\n")
    write(tmp_path, "checks/ihs/helper.py")
    write(tmp_path, "checks/ihs/test_b.py", "from checks.ihs.test_a import X\nfrom . import conftest\n")
    write(tmp_path, "checks/ihs/conftest.py")
    write(tmp_path, "checks/was/test_c.py", "from checks.ihs import helper\nfrom checks.hosts import helper\n")
    write(tmp_path, "checks/ihs/test_d.py", "from checks.hosts import helper\n")  # the harness: allowed
    write(tmp_path, "zrunbook/was/x.py", "from checks.hosts.plugin import SELECTED\n")
    write(tmp_path, "docs/_ext/ext.py", "import checks\nimport pytest\n")
    write(tmp_path, "zrunbook/db2/clp.py")
    write(tmp_path, "zrunbook/formats/clp.py")
    write(tmp_path, "zrunbook/webseal/ldap.py", "from zrunbook.db2 import clp\nfrom zrunbook.formats import clp\n"
                                                "from testinfra.host import Host\n")
    write(tmp_path, "zrunbook/verify/target.py", "import pytest\nimport testinfra\n")  # the application: allowed
    for package in ("db2", "formats", "monitor", "verify", "was", "webseal"):
        write(tmp_path, f"zrunbook/{package}/__init__.py")
    write(tmp_path, "zrunbook/monitor/m.py", "from zrunbook.db2 import clp\n")  # a chapter no list names
    assert layout_problems(tmp_path) == [
        "zrunbook/monitor/m.py:1: imports zrunbook.db2.clp: another chapter's package; share it through "
        "zrunbook/formats/ or a core module",
        "zrunbook/was/x.py:1: imports checks.hosts.plugin: zrunbook and docs never import checks",
        "zrunbook/webseal/ldap.py:1: imports zrunbook.db2.clp: another chapter's package; share it through "
        "zrunbook/formats/ or a core module",
        "zrunbook/webseal/ldap.py:3: imports testinfra.host: the library and the guide never import a test "
        "framework (only zrunbook/verify/ may)",
        "docs/_ext/ext.py:1: imports checks: zrunbook and docs never import checks",
        "docs/_ext/ext.py:2: imports pytest: the library and the guide never import a test framework (only "
        "zrunbook/verify/ may)",
        "checks/ihs/test_b.py:1: imports checks.ihs.test_a: a test module or conftest; share through zrunbook/ "
        "or a fixture",
        "checks/ihs/test_b.py:2: imports checks.ihs.conftest: a test module or conftest; share through zrunbook/ "
        "or a fixture",
        "checks/was/test_c.py:1: imports checks.ihs.helper: another chapter's checks module",
    ]


def test_standin_check_names_each_stand_in_the_library_holds(tmp_path):
    # what the library is for reaches these: the guide, a page's :rows:, a value, a validator, the commands
    write(tmp_path, "conf.py", "import zrunbook\n")
    write(tmp_path, "docs/_ext/ext.py", 'import importlib\nfrom zrunbook import guide\n'
                                        'importlib.import_module("zrunbook.results.charts")\n')
    write(tmp_path, "docs/page.md", "```{facts-table} facts/x.csv\n:rows: crypto.routes:with_route\n```\n")
    write(tmp_path, "zrunbook/checkers.toml", '[lint]\nkind = "static"\nvalidator = "zrunbook.static.lint:problems"\n')
    write(tmp_path, "Makefile", "bench:  # not zrunbook/ihs/gskit_server.py: a comment only mentions\n"
                                "\tpython -m zrunbook.bench\n")
    write(tmp_path, "pyproject.toml", '[hook]\npath = "zrunbook/hook.py"\n')
    write(tmp_path, "zrunbook/__main__.py", "from zrunbook.verify import cli\n")
    write(tmp_path, "zrunbook/verify/cli.py", 'ARGS = ["-p", "zrunbook.verify.plugin", "fleet.py"]\n')
    write(tmp_path, "zrunbook/ihs/values.py", "from zrunbook.ihs import tls_groups\n")
    write(tmp_path, "zrunbook/guide.py", '"""Not zrunbook.was.wsadmin_fake: a docstring only mentions."""\n')
    for rel in ("zrunbook/__init__.py", "zrunbook/results/charts.py", "zrunbook/crypto/routes.py",
                "zrunbook/static/lint.py", "zrunbook/bench.py", "zrunbook/hook.py", "zrunbook/verify/plugin.py",
                "zrunbook/verify/fleet.py", "zrunbook/ihs/__init__.py", "zrunbook/ihs/tls_groups.py",
                "zrunbook/shown_output.py"):
        write(tmp_path, rel)
    # the stand-ins: a server the checks build, its driver only a test imports, a fake a test copies to a host
    write(tmp_path, "zrunbook/ihs/gskit_server/gskserve.c", "int main(void) { return 0; }\n")
    write(tmp_path, "zrunbook/was/TokenHttpsServer.java", "public class TokenHttpsServer {}\n")
    write(tmp_path, "zrunbook/ihs/gskit_server.py")
    write(tmp_path, "zrunbook/was/wsadmin_fake.py")
    write(tmp_path, "checks/ihs/test_a.py", "from zrunbook.ihs import gskit_server\n")
    helpers = {"zrunbook.shown_output": "test-only, no stand-in", "zrunbook.gone": "removed since",
               "zrunbook.guide": "the guide imports it now"}
    assert standin_problems(tmp_path, helpers) == [
        "zrunbook/ihs/gskit_server/gskserve.c: a C source in the library: a program only the checks build or run; it "
        "belongs in checks/standins/",
        "zrunbook/was/TokenHttpsServer.java: a Java source in the library: a program only the checks build or run; it "
        "belongs in checks/standins/",
        "zrunbook/ihs/gskit_server.py: nothing but the checks reaches it (not the guide, the pages, the checkers or "
        "the commands); a stand-in belongs in checks/standins/",
        "zrunbook/was/wsadmin_fake.py: nothing but the checks reaches it (not the guide, the pages, the checkers or "
        "the commands); a stand-in belongs in checks/standins/",
        "zrunbook.gone: named in TEST_HELPERS, but the library has no such module",
        "zrunbook.guide: named in TEST_HELPERS, but the library reaches it: drop it from the list",
    ]
    # moved to checks/standins/, they are the checks' own, and a chapter's checks may import them
    for rel in ("ihs/gskit_server/gskserve.c", "was/TokenHttpsServer.java", "ihs/gskit_server.py",
                "was/wsadmin_fake.py"):
        (tmp_path / "checks/standins" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "zrunbook" / rel).rename(tmp_path / "checks/standins" / rel)
    write(tmp_path, "checks/ihs/test_a.py", "from checks.standins.ihs import gskit_server\n")
    assert standin_problems(tmp_path, {"zrunbook.shown_output": "test-only, no stand-in"}) == []
    assert layout_problems(tmp_path) == []
