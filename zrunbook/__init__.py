"""zrunbook: the runbook's library. The guide (docs/_ext) and the checks (checks/) both import it; it
imports neither, and nothing in it imports pytest.

Where things are, named once:
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
# Installed from the wheel (pyproject.toml, zrunbook/wheel.py), the package carries the snippets verify and doctor
# run and the facts tables under _shipped/, which then stands for the checkout; a checkout has no _shipped/.
SHIPPED = HERE / "_shipped"
ROOT = SHIPPED if SHIPPED.is_dir() else HERE.parent
SNIPPETS = ROOT / "snippets"  # every file a reader copies; shown by the guide, checked by checks/
FACTS = ROOT / "facts"  # the facts tables (CSV with sources) the validators and the reference pages share
BUILD = ROOT / "build"
