"""The verify tool as a wheel, for the reader who has only the site: ``python -m zrunbook.wheel [DIR]``.

Builds ``zrunbook-VERSION-py3-none-any.whl`` from this checkout with hatchling (pyproject.toml says what goes in:
the zrunbook package, and under ``zrunbook/_shipped/`` the snippets verify and doctor run and the facts tables),
and writes ``NAME.whl.sha256`` beside it in ``sha256sum`` format, so that ``sha256sum -c`` checks a download.
The default folder is ``build/wheel`` (``make wheel``); the site build calls ``build`` for its downloads
(docs/_ext/downloads.py). hatchling's own PEP 517 hook runs in a child process with this checkout as its working
folder, offline: the hook needs no network, only hatchling installed (the docs dependency group). hatchling
gives every file in the archive the same fixed time, so the same sources give the same bytes and the same SHA-256.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from zrunbook import BUILD, ROOT

DEFAULT = BUILD / "wheel"
HOOK = "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))"


class WheelError(RuntimeError):
    pass


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def build(out: Path = DEFAULT) -> Path:
    """The wheel built into ``out`` (older zrunbook wheels there removed first), with its ``.sha256`` beside it."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("zrunbook-*.whl*"):
        old.unlink()
    done = subprocess.run([sys.executable, "-c", HOOK, str(out)], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        if "No module named 'hatchling'" in done.stderr:
            said = "hatchling is missing: install it (pip install 'hatchling>=1.27,<2'; make wheel does)"
        raise WheelError(f"the verify tool's wheel did not build: {said}")
    wheel = out / done.stdout.strip().splitlines()[-1]
    (out / f"{wheel.name}.sha256").write_text(f"{sha256(wheel)}  {wheel.name}\n", encoding="utf-8")
    return wheel


def main(argv: list[str]) -> int:
    try:
        wheel = build(Path(argv[0]) if argv else DEFAULT)
    except WheelError as exc:
        print(f"zrunbook.wheel: {exc}", file=sys.stderr)
        return 1
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
