"""The snippet bundle for deployers: every file under snippets/ plus a manifest, as one archive.

``python -m checks.bundle [OUT]`` writes ``build/zrunbook-snippets.tar.gz`` (or OUT). The manifest
(``MANIFEST.json`` at the archive's root, also written beside the archive) lists, per snippet, its
path, sha256, the checkers and hosts that cover it, and the outcome of the last ``make check`` for
exactly these bytes ("not run" when no result matches the file's current sha256).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNIPPETS = ROOT / "snippets"
RESULTS = ROOT / "build" / "checks" / "results.json"


def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def collect_coverage() -> dict:
    # Into a file of its own: a guide build running at the same time reads build/checks/coverage.json.
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coverage.json"
        subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", f"--zr-coverage={out}",
                        "checks"], cwd=ROOT, check=True, capture_output=True,
                       env=dict(os.environ, ZR_HOSTS=""))  # coverage names every host, whichever this run narrows to
        return _load(out)


def manifest(coverage: dict, results: dict) -> list[dict]:
    rows = []
    for path in sorted(p for p in SNIPPETS.rglob("*") if p.is_file()):
        rel = path.relative_to(SNIPPETS).as_posix()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        checks = []
        for checker, host in sorted({(c["checker"], c.get("host") or "static")
                                     for c in coverage.get("snippets", {}).get(rel, [])}):
            runs = [r for r in results.get("snippets", {}).get(rel, {}).get("runs", [])
                    if r["checker"] == checker and (r.get("host") or "static") == host
                    and r.get("sha256") == digest]
            if not runs:
                outcome = "not run"
            elif all(r["outcome"] == "passed" for r in runs):
                outcome = "passed"
            else:
                outcome = "failed"
            checks.append({"checker": checker, "host": host, "last_result": outcome})
        rows.append({"path": rel, "sha256": digest, "checks": checks})
    return rows


def write_bundle(out: Path) -> Path:
    rows = manifest(collect_coverage(), _load(RESULTS))
    data = json.dumps({"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "snippets": rows}, indent=1).encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        info = tarfile.TarInfo("zrunbook-snippets/MANIFEST.json")
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))
        for row in rows:
            tar.add(SNIPPETS / row["path"], arcname=f"zrunbook-snippets/{row['path']}", recursive=False)
    out.with_name("MANIFEST.json").write_bytes(data)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "zrunbook-snippets.tar.gz"
    print(write_bundle(target))
