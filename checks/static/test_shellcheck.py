"""Every shell snippet is strict and says what it does (shellcheck itself runs over every snippet and the study's
broken lines in checks/test_static_checkers.py, from zrunbook/checkers.toml)."""

from pathlib import Path

import pytest

from zrunbook import SNIPPETS, registry

ROOT = Path(__file__).resolve().parents[2]

SHELL = sorted(p.relative_to(SNIPPETS).as_posix() for p in SNIPPETS.rglob("*.sh"))


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*.sh")
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


@pytest.mark.parametrize("bad", sorted(p.name for p in (Path(__file__).parent / "bad").glob("*.sh")))
def test_shellcheck_rejects_the_studys_broken_shell(bad):
    """The errata table names this test; the registry runs the same files (checks/test_static_checkers.py)."""
    assert registry.problems("shellcheck", Path(__file__).parent / "bad" / bad), f"shellcheck accepted {bad}"
