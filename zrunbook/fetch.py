"""A file from a public registry, pinned by SHA-256 and cached under build/cache/: what the checks run that no
Debian package carries (IBM's JDBC driver, Open Liberty). Nothing is run that does not match its pin."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import urllib.request
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One process at a time makes ``path`` (xdist workers share the cache): an flock on ``path.lock``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def pinned(url: str, sha256: str, dest: Path) -> Path:
    """dest, fetched from url once; an AssertionError naming the address when it cannot be had or differs.
    Two workers asking at once fetch it once: the second waits for the first (``locked``)."""
    with locked(dest):
        return _pinned(url, sha256, dest)


def _pinned(url: str, sha256: str, dest: Path) -> Path:
    if dest.exists() and hashlib.sha256(dest.read_bytes()).hexdigest() == sha256:
        return dest
    try:
        with urllib.request.urlopen(url, timeout=600) as response:  # noqa: S310 - fixed https addresses
            data = response.read()
    except OSError as err:
        raise AssertionError(f"{url} could not be fetched ({err}): put {dest.name} in {dest.parent} by hand "
                             "on a machine without network") from err
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise AssertionError(f"{url} has SHA-256 {digest}, not the pinned {sha256}: refusing to run it")
    tmp = dest.with_name(dest.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return dest
