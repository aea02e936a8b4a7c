"""The snippet bundle for deployers: every file under snippets/ plus a manifest, as one archive.

``python -m zrunbook bundle [OUT]`` writes ``build/zrunbook-snippets.tar.gz`` (or OUT). The manifest
(``MANIFEST.json`` at the archive's root, also written beside the archive) lists, per snippet, its
path, sha256, and per checker and host the declarations name, the outcome this checkout's results
(build/results.json, written by ``make check``) record for exactly these bytes, with the date and commit of
that check: the same ``zrunbook.ledger.entries`` the guide's badges show. With no results, "not run".
The archive also holds ``crypto/verify/fixed-versions.args``, the fixed-versions table's rows as the arguments of
check-fixed-versions.sh (one per line), which the monitoring exporter beside it reads.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from pathlib import Path

from zrunbook import BUILD, SNIPPETS, ledger
from zrunbook.crypto import fixed_versions
from zrunbook.snippets import all_snippets, digest

DEFAULT = BUILD / "zrunbook-snippets.tar.gz"
FIXED_ARGS = "crypto/verify/fixed-versions.args"  # generated from facts/crypto/fixed-versions.csv


def manifest(data: dict, root: Path = SNIPPETS) -> list[dict]:
    rows = []
    for rel in all_snippets(root):
        sha = digest(rel, root)
        checks = [{"checker": e["checker"], "host": e["host"], "last_result": e["outcome"],
                   "checked": e["date"], "commit": e["commit"]} for e in ledger.entries(data, rel, sha)]
        rows.append({"path": rel, "sha256": sha, "checks": checks})
    return rows


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Every entry root's, whoever built the bundle: the install step unpacks it with --no-same-owner anyway, and a
    reader's plain ``tar x`` as root then makes no file another user's."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mode &= 0o755  # whatever the builder's umask: no entry writable by group or others
    return info


def write_bundle(out: Path = DEFAULT, results: Path = ledger.RESULTS, site=None,
                 declarations: Path = ledger.DECLARATIONS) -> Path:
    """The archive; with ``site`` (a zrunbook.verify.profile.Profile) also ``site.env``, the profile's values as
    the shell variables the snippets read: the same values make verify checks."""
    rows = manifest(ledger.read(results, declarations))
    data = json.dumps({"generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "results": results.name if results.is_file() else None, "snippets": rows},
                      indent=1).encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        info = _as_root(tarfile.TarInfo("zrunbook-snippets/MANIFEST.json"))
        info.size, info.mtime = len(data), int(time.time())
        tar.addfile(info, io.BytesIO(data))
        for row in rows:
            tar.add(SNIPPETS / row["path"], arcname=f"zrunbook-snippets/{row['path']}", recursive=False,
                    filter=_as_root)
        rows_file = ("\n".join(fixed_versions.arguments()) + "\n").encode()
        info = _as_root(tarfile.TarInfo(f"zrunbook-snippets/{FIXED_ARGS}"))
        info.size, info.mtime, info.mode = len(rows_file), int(time.time()), 0o644
        tar.addfile(info, io.BytesIO(rows_file))
        if site is not None:
            from zrunbook.verify.profile import env_file

            env = env_file(site).encode()
            info = _as_root(tarfile.TarInfo("zrunbook-snippets/site.env"))
            info.size, info.mtime, info.mode = len(env), int(time.time()), 0o644
            tar.addfile(info, io.BytesIO(env))
    out.with_name("MANIFEST.json").write_bytes(data)
    return out
