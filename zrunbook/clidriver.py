"""Shared by the Db2, IHS and WebSEAL chapters (a core module: no chapter package imports another's):
IBM's Db2 CLI driver (IBM Data Server Driver for ODBC and CLI) as PyPI's ``ibm_db`` wheel carries it: ``clidriver/``
with ``db2cli`` and, in ``clidriver/lib/icc/``, IBM's GSKit; ``ibm_db.libs/`` holds the libraries the wheel's build
bundled for it (db2cli needs them on the library path). The manylinux x86_64 wheel is pinned by version and SHA-256
(zrunbook/fetch.py), fetched once into build/cache/clidriver/ and unpacked beside it; the Db2 chapter's checks mount
the unpacked folder read-only at /opt/ibm_db on the amd64 host and run db2cli there. Nothing is fetched in a host.

The levels below are what the driver itself reports (``db2level``; GSKit's build line in libgsk8ssl_64.so): the checks
assert them, and the checker registry (zrunbook/checkers.toml, ``db2cli``) names them.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

from zrunbook import BUILD, fetch

VERSION = "3.3.0"  # the ibm_db wheel
WHEEL = f"ibm_db-{VERSION}-cp313-cp313-manylinux_2_34_x86_64.whl"
SHA256 = "d12a9bb6f3a3eb4cd87e907b25efc2ad487e2e85e481fa5be590fa0722d86db8"
URL = ("https://files.pythonhosted.org/packages/12/22/c1032bf3ab47ed702d0c7b49ecb54840e647d980373ec21361aae73f1980/"
       + WHEEL)
DB2_LEVEL = "DB2 v12.1.4.0"  # db2level's "Informational tokens"
GSKIT = "8.0.60.5"  # libgsk8ssl_64.so: "gsk8l (GoldCoast Build 8.0.60) 251111_8.0.60.5"
CACHE = BUILD / "cache" / "clidriver"
IN_CONTAINER = "/opt/ibm_db"
KEEP = ("clidriver/", "ibm_db.libs/")  # the driver and the libraries it links; the Python module is not needed
# what a shell on the host needs to run db2cli from the mounted folder
ENV = (f"PATH={IN_CONTAINER}/clidriver/bin:$PATH "
       f"LD_LIBRARY_PATH={IN_CONTAINER}/clidriver/lib:{IN_CONTAINER}/ibm_db.libs")


def wheel() -> Path:
    """The wheel, fetched once and checked against its pin."""
    return fetch.pinned(URL, SHA256, CACHE / WHEEL)


def folder() -> Path:
    """The wheel's clidriver/ and ibm_db.libs/, unpacked once (file modes kept: db2cli must stay executable)."""
    dest = CACHE / f"ibm_db-{VERSION}"
    done = dest / ".unpacked"  # holds the SHA-256 of the wheel it came from: a new pin unpacks again
    with fetch.locked(dest):
        if done.exists() and done.read_text(encoding="utf-8") == SHA256:
            return dest
        with zipfile.ZipFile(wheel()) as whl:
            for info in whl.infolist():
                if not info.filename.startswith(KEEP) or info.is_dir():
                    continue
                target = dest / info.filename
                if dest.resolve() not in target.resolve().parents:
                    raise AssertionError(f"{WHEEL}: {info.filename} would land outside {dest}")
                target.parent.mkdir(parents=True, exist_ok=True)
                with whl.open(info) as src, open(target, "wb") as out:
                    out.write(src.read())
                mode = (info.external_attr >> 16) & 0o777
                os.chmod(target, (mode or 0o644) | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        done.write_text(SHA256, encoding="utf-8")
    return dest
