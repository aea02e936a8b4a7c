"""The Open Liberty runtime the Liberty page's checks run: Maven Central's ``io.openliberty:openliberty-runtime``,
pinned by version and SHA-256. ``runtime()`` fetches it once, unpacks it under build/cache/openliberty/ and returns
the ``wlp`` folder; the harness (checks/hosts/liberty.py) mounts it in a container host. The pages state VERSION."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from zrunbook import BUILD, fetch

VERSION = "26.0.0.3"
SHA256 = "bf394f83897a5aa4d0564604637e934c8f64b9fcb06a8dfcec2a49feed951778"
URL = f"https://repo1.maven.org/maven2/io/openliberty/openliberty-runtime/{VERSION}/openliberty-runtime-{VERSION}.zip"
CACHE = BUILD / "cache" / "openliberty"

def runtime() -> Path:
    """The unpacked runtime's wlp folder (fetched and unpacked once); AssertionError naming the address if not."""
    wlp = CACHE / VERSION / "wlp"
    if (wlp / "bin" / "server").exists():
        return wlp
    zip_path = fetch.pinned(URL, SHA256, CACHE / f"openliberty-runtime-{VERSION}.zip")
    with fetch.locked(CACHE / VERSION):  # two workers: one unpacks, the other finds it unpacked
        if (wlp / "bin" / "server").exists():
            return wlp
        _unpack(zip_path)
    return wlp


def _unpack(zip_path: Path) -> None:
    tmp = CACHE / f"{VERSION}.part"
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(tmp)
        for info in archive.infolist():  # zipfile drops the modes: scripts stay executable, everything readable
            executable = info.is_dir() or (info.external_attr >> 16) & 0o111
            os.chmod(tmp / info.filename, 0o755 if executable else 0o644)
    tmp.chmod(0o755)
    shutil.rmtree(CACHE / VERSION, ignore_errors=True)
    tmp.rename(CACHE / VERSION)
