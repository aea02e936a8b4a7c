"""The snippet bundle as a reader installs it (the renewal and monitoring pages): the archive and its ``.sha256``,
copied into a host and installed by the pages' step, ``snippets/daytwo/install-snippet-bundle.sh``, as
``/opt/zrunbook/snippets``, root's and readable by all.

* ``made()``: the archive as the site's downloads folder offers it, written by the same code (zrunbook.bundle, which
  the guide build calls) from this checkout, with its ``.sha256`` beside it; once per process.
* ``install(host, tarball=None, step=None)``: the archive (a built site's download, or ``made()``) and its
  ``.sha256`` copied into ``/root/dl``, then the install step run there as root, as the page says; its output.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
import tempfile
from pathlib import Path

from checks import observe
from checks.hosts import engine as eng
from checks.hosts.steps import reads, snippet_path
from checks.hosts.util import ok
from zrunbook import bundle

STEP = "daytwo/install-snippet-bundle.sh"
INSTALLED = "/opt/zrunbook/snippets"
DL = "/root/dl"  # where the reader keeps what it downloaded


def installed(path: str) -> str:
    """Where snippets/<path> is once the bundle is installed."""
    return f"{INSTALLED}/{path}"


@functools.cache
def made() -> Path:
    out = Path(tempfile.mkdtemp(prefix="zr-bundle-")) / "zrunbook-snippets.tar.gz"
    with observe.quiet():  # packing every snippet is not the test reading them: what runs in the host is the test's
        bundle.write_bundle(out)
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    out.with_name(f"{out.name}.sha256").write_text(f"{digest}  {out.name}\n", encoding="utf-8")
    return out


def copy_in(host, *files: Path, folder: str = DL) -> None:
    ok(host, f"install -d -m 0700 {folder}")
    cli = eng.Engine.detect().cli
    for path in files:
        subprocess.run([cli, "cp", str(path), f"{host.zr_container}:{folder}/{path.name}"], check=True,
                       capture_output=True)


@reads(STEP)
def install(host, tarball: Path | None = None, step: str | None = None) -> str:
    tarball = tarball or made()
    copy_in(host, tarball, tarball.with_name(f"{tarball.name}.sha256"))
    return ok(host, f"cd {DL} && bash {step or snippet_path(STEP)} ./{tarball.name}")
