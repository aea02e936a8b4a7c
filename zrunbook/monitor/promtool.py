"""Prometheus's own promtool on the monitoring snippets (Debian's prometheus package carries /usr/bin/promtool).

``metrics_problems(path)``: ``promtool check metrics`` on a text-format metrics file (what node_exporter's
textfile collector reads); ``rules_problems(path)``: ``promtool check rules``; ``rule_tests_problems(path)``:
``promtool test rules`` (the rule files it names are read relative to it). Each returns promtool's complaints,
empty when it passes. A missing promtool is a problem that says what to install, never a pass.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

INSTALL = ("promtool is missing: install Debian's prometheus package "
           "(apt-get install --no-install-recommends prometheus)")


def promtool(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    tool = shutil.which("promtool")
    if tool is None:
        raise FileNotFoundError(INSTALL)
    return subprocess.run([tool, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=120,
                          check=False)


def _problems(done: subprocess.CompletedProcess, what: str) -> list[str]:
    if done.returncode == 0:
        return []
    said = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    return [f"{what} failed (exit {done.returncode}): " + " | ".join(said[-12:])]


def metrics_problems(path: Path) -> list[str]:
    """promtool check metrics reads the file on stdin; lint warnings (exit 3) count as problems too."""
    try:
        done = promtool("check", "metrics", stdin=Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as missing:
        return [str(missing)]
    return _problems(done, "promtool check metrics")


def rules_problems(path: Path) -> list[str]:
    try:
        done = promtool("check", "rules", str(path))
    except FileNotFoundError as missing:
        return [str(missing)]
    return _problems(done, "promtool check rules")


def rule_tests_problems(path: Path) -> list[str]:
    path = Path(path)
    try:
        done = promtool("test", "rules", path.name, cwd=path.parent)
    except FileNotFoundError as missing:
        return [str(missing)]
    return _problems(done, "promtool test rules")
