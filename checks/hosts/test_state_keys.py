"""A prepared state's key hashes exactly what its preparation runs: its snippets, its files and the project modules
it imports (zrunbook/hosts/steps.py State.modules). Proved both ways on a copy of the project: a change to a module
the preparation does not import leaves the key as it was; a change to one it imports, or to one of its snippets,
makes a new key. No container is started: the key is computed from files."""

from __future__ import annotations

import shutil

import pytest

from zrunbook import ROOT
from zrunbook.hosts import engine as eng
from zrunbook.hosts.apache import TOKEN_KEY


@pytest.fixture
def project_copy(tmp_path, monkeypatch):
    for part in ("zrunbook", "checks", "snippets"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(eng, "REPO", tmp_path)
    monkeypatch.setattr(eng, "SNIPPETS", tmp_path / "snippets")
    return tmp_path


def test_the_token_key_state_runs_the_token_and_apache_helpers_and_no_other_chapter():
    names = {p.relative_to(eng.REPO).as_posix() for p in TOKEN_KEY.modules()}
    assert {"zrunbook/hosts/apache.py", "zrunbook/hosts/token.py", "zrunbook/hosts/steps.py",
            "zrunbook/ihs/distro_paths.py"} <= names, names
    assert not {n for n in names if n.startswith(("zrunbook/verify/", "zrunbook/db2/", "checks/"))}, names


def test_an_unrelated_module_changed_keeps_the_key(project_copy):
    before = TOKEN_KEY.inputs()
    with (project_copy / "zrunbook/verify/fleet.py").open("a", encoding="utf-8") as fh:
        fh.write("# a comment in a module the preparation does not import\n")
    with (project_copy / "checks/verify/test_verify.py").open("a", encoding="utf-8") as fh:
        fh.write("# and in a test\n")
    assert TOKEN_KEY.inputs() == before


@pytest.mark.parametrize("changed", ["zrunbook/hosts/token.py", "zrunbook/ihs/distro_paths.py",
                                     "snippets/crypto/token/init-token.sh"])
def test_a_module_or_snippet_the_preparation_uses_changed_makes_a_new_key(project_copy, changed):
    before = TOKEN_KEY.inputs()
    with (project_copy / changed).open("a", encoding="utf-8") as fh:
        fh.write("# changed\n")
    assert TOKEN_KEY.inputs() != before
