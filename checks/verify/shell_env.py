"""The environment the verify and doctor checks run the CLI in: a reader's shell, whose PATH does not hold the
tox environment's bin folder (``.tox/verify/bin/python -m zrunbook verify`` as the verify page gives it). The CLI
must find Ansible's programs itself (zrunbook/verify/target.py ``tools_on_path``); adding the folder here hid that
it did not."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def reader_env(**extra: str) -> dict[str, str]:
    venv = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv)
    return {**os.environ, "PATH": path, **extra}
