"""The verify tool's wheel (zrunbook/wheel.py, pyproject.toml), read without installing it.

It must carry, byte for byte, every snippet verify and doctor run on a host (zrunbook/verify/steps.py STEPS and
zrunbook/verify/doctor.py PROBE) and nothing else under snippets/, and the facts tables; declare exactly the verify
dependency group's requirements; name the console script; and come out the same from the same sources, so the
SHA-256 the site shows is that of any build of the commit.
"""

from __future__ import annotations

import re
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from zrunbook import FACTS, ROOT, SNIPPETS
from zrunbook import __main__ as cli
from zrunbook import wheel as zwheel
from zrunbook.verify.doctor import PROBE
from zrunbook.verify.steps import STEPS

SHIPPED = "zrunbook/_shipped/"
PAGE = ROOT / "docs" / "how-to" / "verify-your-fleet.md"
RUNS = {s.snippet for s in STEPS} | {PROBE}


def differences(wheel: Path) -> list[str]:
    """How the wheel's snippets and facts differ from this checkout's ([] when they are the same files)."""
    out = []
    with zipfile.ZipFile(wheel) as zf:
        inside = {n[len(SHIPPED):]: n for n in zf.namelist() if n.startswith(SHIPPED)}
        snippets = {k[len("snippets/"):] for k in inside if k.startswith("snippets/")}
        out += [f"missing from the wheel: snippets/{rel}" for rel in sorted(RUNS - snippets)]
        out += [f"in the wheel, but verify does not run it: snippets/{rel}" for rel in sorted(snippets - RUNS)]
        facts = {p.relative_to(FACTS).as_posix() for p in FACTS.rglob("*") if p.is_file()}
        shipped_facts = {k[len("facts/"):] for k in inside if k.startswith("facts/")}
        out += [f"facts/{rel}: not in the wheel" for rel in sorted(facts - shipped_facts)]
        for rel in sorted(RUNS & snippets):
            if zf.read(inside[f"snippets/{rel}"]) != (SNIPPETS / rel).read_bytes():
                out.append(f"snippets/{rel}: the wheel's bytes differ from the checkout's")
        for rel in sorted(facts & shipped_facts):
            if zf.read(inside[f"facts/{rel}"]) != (FACTS / rel).read_bytes():
                out.append(f"facts/{rel}: the wheel's bytes differ from the checkout's")
    return out


def metadata(wheel: Path, name: str) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(next(n for n in zf.namelist() if n.endswith(f".dist-info/{name}"))).decode()


def requirement_problems(declared: list[str], group: list[str]) -> list[str]:
    want = {str(Requirement(r)) for r in group}
    have = {str(Requirement(r)) for r in declared}
    return ([f"the wheel requires {r}, the verify group does not" for r in sorted(have - want)]
            + [f"the verify group needs {r}, the wheel does not require it" for r in sorted(want - have)])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return zwheel.build(tmp_path_factory.mktemp("wheel"))


@pytest.mark.uses("crypto/adapters/check-ap-ready.sh", "crypto/verify/check-bulk-cipher-in-libica.sh",
                  "crypto/verify/check-fixed-versions.sh", "crypto/verify/check-hybrid-group.sh",
                  "crypto/verify/check-key-in-token.sh", "crypto/verify/check-tls-protocols.sh",
                  "crypto/verify/check-token-signs.sh", "ihs/apache/check-hsts.sh",
                  "ihs/apache/check-session-resumption.sh", "ihs/apache/check-token-site-files.sh",
                  "monitor/check-certificate-expiry.sh", "verify/check-verify-sudo.sh", "verify/doctor-probe.sh")
def test_the_wheel_carries_every_snippet_verify_runs_byte_for_byte_and_the_facts(built):
    assert differences(built) == []


@pytest.mark.uses("crypto/adapters/check-ap-ready.sh", "crypto/verify/check-fixed-versions.sh",
                  "crypto/verify/check-hybrid-group.sh", "crypto/verify/check-key-in-token.sh",
                  "crypto/verify/check-tls-protocols.sh", "crypto/verify/check-token-signs.sh",
                  "ihs/apache/check-hsts.sh", "ihs/apache/check-session-resumption.sh",
                  "ihs/apache/check-token-site-files.sh", "monitor/check-certificate-expiry.sh",
                  "verify/check-verify-sudo.sh", "verify/doctor-probe.sh")
def test_the_contents_check_finds_a_changed_and_a_missing_snippet(built, tmp_path):
    changed = sorted(RUNS)[0]
    gone = sorted(RUNS)[1]
    bad = tmp_path / built.name
    with zipfile.ZipFile(built) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == f"{SHIPPED}snippets/{changed}":
                data += b"\necho changed\n"
            if item.filename != f"{SHIPPED}snippets/{gone}":
                dst.writestr(item, data)
    assert differences(bad) == [f"missing from the wheel: snippets/{gone}",
                                f"snippets/{changed}: the wheel's bytes differ from the checkout's"]


def test_the_wheel_requires_exactly_the_verify_group():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    group = project["dependency-groups"]["verify"]
    assert requirement_problems(project["project"]["dependencies"], group) == []
    assert requirement_problems(["pytest>=9.0", *group[1:]], group) == [
        "the wheel requires pytest>=9.0, the verify group does not",
        f"the verify group needs {Requirement(group[0])}, the wheel does not require it"]


def test_the_built_wheel_declares_those_requirements_and_the_console_script(built):
    declared = [line.split(":", 1)[1].strip() for line in metadata(built, "METADATA").splitlines()
                if line.startswith("Requires-Dist:")]
    group = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]["verify"]
    assert requirement_problems(declared, group) == []
    assert "zrunbook = zrunbook.__main__:installed" in metadata(built, "entry_points.txt")


def test_the_same_sources_give_the_same_wheel(built, tmp_path):
    again = zwheel.build(tmp_path)
    assert zwheel.sha256(again) == zwheel.sha256(built)
    assert (tmp_path / f"{again.name}.sha256").read_text() == f"{zwheel.sha256(built)}  {built.name}\n"


def test_the_console_script_runs_verify_and_doctor_only(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["zrunbook", "where", "verify/inventory.yml"])
    assert cli.installed() == 2
    assert "'where' is not a command of the installed tool, which has verify and doctor" in capsys.readouterr().err
    monkeypatch.setattr("sys.argv", ["zrunbook"])
    assert cli.installed() == 2
    assert "zrunbook verify --inventory INV" in capsys.readouterr().out


def named_wheels_problems(page: str, name: str) -> list[str]:
    """The wheel file names the page's steps are run with (their :run: lines) that are not the built wheel's."""
    return [f"the page runs a step with {n}, the build makes {name}"
            for n in sorted(set(re.findall(r"^:run: \./(zrunbook-\S+\.whl)", page, re.M))) if n != name]


def test_the_page_runs_its_steps_with_the_wheel_the_build_makes(built):
    page = PAGE.read_text(encoding="utf-8")
    assert re.search(r"^:run: \./zrunbook-", page, re.M)
    assert named_wheels_problems(page, built.name) == []
    assert named_wheels_problems(":run: ./zrunbook-0.0.9-py3-none-any.whl wheelhouse\n", built.name) == [
        f"the page runs a step with zrunbook-0.0.9-py3-none-any.whl, the build makes {built.name}"]
