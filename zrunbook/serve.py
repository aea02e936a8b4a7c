"""Live preview for writers: ``make serve`` rebuilds the guide on every change and reloads the browser.

sphinx-autobuild runs the same build as ``make html`` (warnings are shown, not fatal, so a half-written page
still previews), listening on 127.0.0.1 only: the preview is for the writer's own machine.
"""

from __future__ import annotations

import sys
from pathlib import Path

from zrunbook import ROOT, ledger

HOST = "127.0.0.1"


def command(src: Path = ROOT / "docs", out: Path = ROOT / "build" / "preview", port: int = 8000,
            conf: Path = ROOT) -> list[str]:
    """The sphinx-autobuild command line: loopback only, the project's conf.py; snippets, facts, the declarations
    and the results `make check` writes watched too (a changed snippet or result changes the page that shows it)."""
    declarations, results = (conf / p.relative_to(ROOT) for p in (ledger.DECLARATIONS, ledger.RESULTS))
    watch = [a for d in (conf / "snippets", conf / "facts", declarations, results) if d.exists()
             for a in ("--watch", str(d))]
    return [sys.executable, "-m", "sphinx_autobuild", "-c", str(conf), str(src), str(out),
            "--host", HOST, "--port", str(port), *watch]


def main(args: list[str]) -> int:
    import os
    port = int(args[0]) if args else 8000
    print(f"zrunbook preview on http://{HOST}:{port}/ (this machine only); it rebuilds on every change. "
          "Ctrl-C stops it.", flush=True)
    if not ledger.RESULTS.exists():  # no run yet: empty results, watched, so that a later make check shows
        ledger.save(ledger.load())
    cmd = command(port=port)
    os.execv(cmd[0], cmd)
    return 0  # not reached
