"""A prepared state's key hashes exactly what its preparation runs: its snippets, its files and the project modules
it imports (checks/hosts/steps.py State.modules). Proved both ways on a copy of the project: a change to a module
the preparation does not import leaves the key as it was; a change to one it imports, or to one of its snippets,
makes a new key. No container is started: the key is computed from files."""

from __future__ import annotations

import shutil

import pytest

from checks.hosts import engine as eng
from checks.hosts.apache import TOKEN_KEY
from zrunbook import ROOT


@pytest.fixture
def project_copy(tmp_path, monkeypatch):
    for part in ("zrunbook", "checks", "snippets"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(eng, "REPO", tmp_path)
    monkeypatch.setattr(eng, "SNIPPETS", tmp_path / "snippets")
    return tmp_path


def test_the_token_key_state_runs_the_token_and_apache_helpers_and_no_other_chapter():
    names = {p.relative_to(eng.REPO).as_posix() for p in TOKEN_KEY.modules()}
    assert {"checks/hosts/apache.py", "checks/hosts/token.py", "checks/hosts/steps.py",
            "zrunbook/ihs/distro_paths.py"} <= names, names
    other = {n for n in names if n.startswith(("zrunbook/verify/", "zrunbook/db2/", "checks/"))
             and not n.startswith("checks/hosts/") and n != "checks/__init__.py"}  # the harness is checks/hosts/
    assert not other, names
    assert "checks/hosts/plugin.py" not in names  # pytest's side of the harness does not make a state


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_an_unrelated_module_changed_keeps_the_key(project_copy):
    before = TOKEN_KEY.inputs()
    with (project_copy / "zrunbook/verify/fleet.py").open("a", encoding="utf-8") as fh:
        fh.write("# a comment in a module the preparation does not import\n")
    with (project_copy / "checks/verify/test_verify.py").open("a", encoding="utf-8") as fh:
        fh.write("# and in a test\n")
    assert TOKEN_KEY.inputs() == before


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
@pytest.mark.parametrize("changed", ["checks/hosts/token.py", "zrunbook/ihs/distro_paths.py",
                                     "snippets/crypto/token/init-token.sh"])
def test_a_module_or_snippet_the_preparation_uses_changed_makes_a_new_key(project_copy, changed):
    before = TOKEN_KEY.inputs()
    with (project_copy / changed).open("a", encoding="utf-8") as fh:
        fh.write("# changed\n")
    assert TOKEN_KEY.inputs() != before
