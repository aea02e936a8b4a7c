"""Charts drawn at build time from the results data under snippets/results/ (matplotlib, Agg).

Before any page is read (and only when the data or the chart code changed since the last drawing),
``zrunbook.results.charts.render_all`` writes one PNG per chart into
``docs/_charts/`` (git-ignored); pages show them with ``{figure} /_charts/<name>.png``. The data
files are the same ones the results checks validate, so a chart never disagrees with its table.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError


def draw(app: Sphinx) -> None:
    root = Path(app.confdir)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    out = Path(app.srcdir) / "_charts"
    inputs = [p for p in (root / "snippets" / "results").rglob("*") if p.is_file()]
    inputs += [p for p in (root / "zrunbook" / "results").glob("*.py")]
    drawn = list(out.glob("*.png"))
    if drawn and min(p.stat().st_mtime for p in drawn) > max(p.stat().st_mtime for p in inputs):
        return  # nothing the charts are drawn from changed since they were drawn
    # Drawn into a folder of its own, then each PNG renamed into place: a build running at the same time
    # (`make html` during `make check`) copies either the old chart or the new one, never half a file.
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".drawing-") as tmp:
        try:
            charts = importlib.import_module("zrunbook.results.charts")
            drawn = charts.render_all(Path(tmp))
        except Exception as exc:
            raise ExtensionError(f"drawing the results charts failed: {type(exc).__name__}: {exc}") from exc
        for png in drawn:
            os.replace(png, out / png.name)


def setup(app: Sphinx):
    app.connect("builder-inited", draw)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
