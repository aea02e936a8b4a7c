"""The checker registry: ``zrunbook/checkers.toml`` names every checker a test or a page may name.

``kind = "static"`` reads the file only; ``kind = "host"`` runs it on a container host.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

REGISTRY = Path(__file__).with_name("checkers.toml")


def checkers(path: Path = REGISTRY) -> dict[str, dict]:
    with open(path, "rb") as fh:
        return tomllib.load(fh)
