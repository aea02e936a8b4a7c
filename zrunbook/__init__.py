"""zrunbook: the runbook's library. The guide (docs/_ext) and the checks (checks/) both import it; it
imports neither, and nothing in it imports pytest.

Where things are, named once:
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"  # every file a reader copies; shown by the guide, checked by checks/
FACTS = ROOT / "facts"  # the facts tables (CSV with sources) the validators and the reference pages share
BUILD = ROOT / "build"
