"""hatchling's build hook for the verify tool's wheel (pyproject.toml, [tool.hatch.build.hooks.custom]).

It puts into the wheel, under ``zrunbook/_shipped/snippets/``, every snippet verify and doctor run on a host, taken
from the code that runs them (zrunbook/verify/steps.py STEPS and zrunbook/verify/doctor.py PROBE), so that a new step
cannot be missing from the wheel; the facts tables come by pyproject.toml's force-include. Loaded by hatchling only,
never imported by the tool.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def shipped_snippets(root: Path) -> dict[str, str]:
    """Source path -> path in the wheel, for each snippet verify and doctor run."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from zrunbook.verify.doctor import PROBE
    from zrunbook.verify.steps import STEPS

    return {str(root / "snippets" / rel): f"zrunbook/_shipped/snippets/{rel}"
            for rel in sorted({s.snippet for s in STEPS} | {PROBE})}


class ShippedSnippets(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        build_data["force_include"].update(shipped_snippets(Path(self.root)))
