"""Every shell snippet passes shellcheck at style level; the study's broken lines do not."""

from pathlib import Path

import pytest

from zrunbook.static.shellcheck import shellcheck

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
BAD = Path(__file__).parent / "bad"

SHELL = sorted(p.relative_to(SNIPPETS).as_posix() for p in SNIPPETS.rglob("*.sh"))


@pytest.mark.parametrize(
    "rel", [pytest.param(rel, marks=pytest.mark.snippet(rel, checker="shellcheck")) for rel in SHELL])
def test_shell_snippet_passes_shellcheck(rel):
    result = shellcheck(SNIPPETS / rel)
    assert result.returncode == 0, f"shellcheck snippets/{rel}:\n{result.stdout}{result.stderr}"


def test_shell_snippets_are_strict_and_say_what_they_do():
    """set -euo pipefail and a header comment in every shell snippet (STYLE.md, Snippets)."""
    problems = []
    for rel in SHELL:
        lines = (SNIPPETS / rel).read_text(encoding="utf-8").splitlines()
        if "set -euo pipefail" not in lines:
            problems.append(f"snippets/{rel}: no 'set -euo pipefail' line")
        if len(lines) < 2 or not lines[1].startswith("# "):
            problems.append(f"snippets/{rel}: no header comment after the shebang")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("bad", sorted(p.name for p in BAD.glob("*.sh")))
def test_shellcheck_rejects_the_studys_broken_shell(bad):
    result = shellcheck(BAD / bad)
    assert result.returncode != 0, f"shellcheck accepted checks/static/bad/{bad}"
