"""Steps the host checks take on a container host, and prepared states: plain functions of a
pytest-testinfra host object (duck-typed; nothing here imports pytest).

``snippet_path("crypto/packages/verify-packages.sh")``: where ``snippets/<path>`` is inside every
container (the repository's ``snippets/`` is mounted read-only at ``/snippets``).
``run_snippet(host, path, *args)``: runs it with bash and returns testinfra's CommandResult.
``arch(host)``: the host's Debian architecture (``amd64``, ``s390x``), for expectations per architecture.
``start_pkcsslotd(host)``: starts openCryptoki's slot daemon the way a container needs it.
``State``: a host state made once and kept as an image (checks/hosts/plugin.py makes and starts it).
"""

from __future__ import annotations

import hashlib
import inspect
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from zrunbook.hosts import engine as eng


def snippet_path(path: str) -> str:
    return f"{eng.SNIPPETS_IN_CONTAINER}/{path}"


def arch(host) -> str:
    """The Debian architecture of the container host (zrunbook/hosts/engine.py HOSTS)."""
    return eng.HOSTS[host.zr_name].arch


def run_snippet(host, path: str, *args: str):
    """Run snippets/<path> with bash in the container; returns testinfra's CommandResult."""
    return host.run(" ".join(shlex.quote(a) for a in ("bash", snippet_path(path), *args)))


def start_pkcsslotd(host, timeout: float = 60.0) -> None:
    """Start openCryptoki's pkcsslotd in a container and wait until it serves its socket.

    A container has no systemd to create /run/opencryptoki and the lock directories, so this runs
    ``systemd-tmpfiles --create /usr/lib/tmpfiles.d/opencryptoki.conf`` first. Does nothing when the
    daemon already runs.
    """
    if host.run("pgrep -x pkcsslotd").rc == 0:
        return
    res = host.run("systemd-tmpfiles --create /usr/lib/tmpfiles.d/opencryptoki.conf && pkcsslotd")
    if res.rc != 0:
        raise AssertionError(f"pkcsslotd did not start (rc {res.rc}): {res.stdout}{res.stderr}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if host.run("pgrep -x pkcsslotd && test -S /run/opencryptoki/pkcsslotd.socket").rc == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"pkcsslotd was started but is not running with its socket after {timeout:.0f} s")


def stop_pkcsslotd(host) -> None:
    """Stop the slot daemon (before a state is committed: a committed image holds files, not processes)."""
    host.run("pkill -x pkcsslotd; for i in $(seq 100); do pgrep -x pkcsslotd >/dev/null || exit 0; sleep 0.1; done")


@dataclass(frozen=True)
class State:
    """A host state that is expensive to reach (a token initialised under qemu takes 20-40 s), made once
    and kept as an image: ``prepare(host)`` runs on a fresh container of the host image, the container's
    file system is committed, and every test marked ``@pytest.mark.from_state(STATE)`` gets a ``fresh_host``
    started from that image, with ``resume(host)`` run first (daemons do not survive a commit). The value
    ``prepare`` returns (JSON) is ``fresh_host.zr_prepared``.

    The image's tag hashes the host image, the state's name, every file under the snippet folders it
    draws on (``snippets``: folders or files under snippets/, whole folders so that no snippet a helper
    reads is missed), the other files it reads (``files``: a check's Java source), the file ``prepare`` is
    defined in and every module of the zrunbook library and every helper under checks/ (not the tests), so
    a change to any of them makes the state again; nothing stale is reused. A test on a prepared state
    asserts exactly what it asserted when it did the preparation itself: the preparation's own assertions
    ran when the state was made, and a failed preparation makes no image.
    """

    name: str
    prepare: Callable[[object], object]
    resume: Callable[[object], None] = start_pkcsslotd
    snippets: tuple[str, ...] = ()
    stop: Callable[[object], None] = stop_pkcsslotd
    files: tuple[str, ...] = ()  # other repository files prepare reads (a check's Java source, a walk's pages)
    clean: bool = False  # made on the clean walkthrough host instead of the check host (zrunbook/hosts/walks.py)

    def inputs(self) -> list[object]:
        helpers = sorted(p for root in (eng.REPO / "zrunbook", eng.REPO / "checks") for p in root.rglob("*.py")
                         if not p.name.startswith(("test_", "conftest")) and "__pycache__" not in p.parts)
        files = {*helpers, Path(inspect.getsourcefile(self.prepare)), *(eng.REPO / f for f in self.files)}
        return [self.name, self.clean, [(p.relative_to(eng.REPO).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest())
                            for p in sorted(files)],
                [(p.relative_to(eng.SNIPPETS).as_posix(), hashlib.sha256(p.read_bytes()).hexdigest())
                 for p in self.snippet_files()]]

    def snippet_files(self) -> list[Path]:
        files = set()
        for rel in self.snippets:
            path = eng.SNIPPETS / rel
            if not path.exists():
                raise ValueError(f"state {self.name}: snippets/{rel} does not exist")
            files |= {p for p in path.rglob("*") if p.is_file()} if path.is_dir() else {path}
        return sorted(files)
