"""Each ``zrunbook/<package>/values.py`` says in ``DEPENDS_ON`` exactly the files its values are computed from.

The ``{value}`` role (docs/_ext/facts.py) tells Sphinx a page depends on those files, so an incremental build
redraws the page when one changes. The list is kept by hand; this test derives it: each values module is imported
in a fresh interpreter (so no cache of another module hides a read) with an audit hook on ``open``, every public
function without required arguments is called, and the repository files opened are compared with the list.

Reported: a file read that the list leaves out, and an entry that is neither read nor a module the values module
imports (a Python module is listed when a value quotes one of its constants: ``zrunbook/clidriver.py``).
``facts/schema.toml`` is left out of the comparison: the facts loader reads it for every table, and the role notes
it for every value.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from zrunbook import ROOT

PROBE = r"""
import importlib, inspect, json, sys
from pathlib import Path
root = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(root))
read = set()
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, Path)):
        path = Path(args[0]).resolve()
        if path.is_relative_to(root) and path.suffix not in (".py", ".pyc"):
            read.add(path.relative_to(root).as_posix())
sys.addaudithook(hook)
module = importlib.import_module(sys.argv[2])
for name, f in vars(module).items():
    if inspect.isfunction(f) and f.__module__ == module.__name__ and not name.startswith("_"):
        if all(p.default is not p.empty for p in inspect.signature(f).parameters.values()):
            f()
imported = sorted(Path(m.__file__).resolve().relative_to(root).as_posix() for m in list(sys.modules.values())
                  if getattr(m, "__file__", None) and Path(m.__file__).resolve().is_relative_to(root))
print(json.dumps({"read": sorted(read), "imported": imported, "declared": list(getattr(module, "DEPENDS_ON", []))}))
"""
NOTED_FOR_EVERY_VALUE = {"facts/schema.toml"}
VALUES = sorted(p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
                for p in (ROOT / "zrunbook").glob("*/values.py"))


def observed(module: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, str(ROOT), module], capture_output=True, text=True,
                          check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def problems(module: str, seen: dict) -> list[str]:
    declared = set(seen["declared"])
    out = [f"{module}: reads {f}, which DEPENDS_ON leaves out"
           for f in sorted(set(seen["read"]) - declared - NOTED_FOR_EVERY_VALUE)]
    out += [f"{module}: DEPENDS_ON names {f}, which it neither reads nor imports"
            for f in sorted(declared - set(seen["read"]) - set(seen["imported"]))]
    return out


def test_every_values_module_is_found():
    assert "zrunbook.crypto.values" in VALUES
    assert len(VALUES) >= 8  # crypto, db2, errata, ihs, results, verify, was, webseal


@pytest.mark.parametrize("module", VALUES)
def test_depends_on_is_what_the_values_read(module):
    assert problems(module, observed(module)) == []


def test_the_comparison_names_a_missing_and_a_stale_entry():
    seen = {"read": ["facts/schema.toml", "facts/x/t.csv", "snippets/a.sh"], "imported": ["zrunbook/clidriver.py"],
            "declared": ["snippets/a.sh", "zrunbook/clidriver.py", "snippets/gone.sh"]}
    assert problems("zrunbook.x.values", seen) == [
        "zrunbook.x.values: reads facts/x/t.csv, which DEPENDS_ON leaves out",
        "zrunbook.x.values: DEPENDS_ON names snippets/gone.sh, which it neither reads nor imports"]
