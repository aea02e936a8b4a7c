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
* a folder of checks/ (a chapter's checks) importing another folder's module, except the harness (checks/hosts/)
  and the pytest plugins checks/conftest.py names in ``pytest_plugins``.
"""

from __future__ import annotations

import ast
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
                      and not module.startswith(HARNESS + ".")):
                    problems.append(f"{where}: another chapter's checks module")
    return problems


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
