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

import ast
import functools
import hashlib
import inspect
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from checks.hosts import engine as eng

READS = "__zr_reads__"  # the attribute reads() sets: checks/uses.py collects it from the helpers a test calls


def reads(*patterns: str):
    """Declare that a harness helper (or fixture) runs or reads these snippets (paths or globs under snippets/):
    every test that calls it declares them (checks/uses.py). Here, not in checks/uses.py, so that the prepared
    states' keys, which hash the harness modules a preparation imports, do not depend on pytest's side."""

    def mark(fn):
        setattr(fn, READS, (*getattr(fn, READS, ()), *patterns))
        return fn

    return mark


def snippet_path(path: str) -> str:
    return f"{eng.SNIPPETS_IN_CONTAINER}/{path}"


def arch(host) -> str:
    """The Debian architecture of the container host (checks/hosts/engine.py HOSTS)."""
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
    # The probe account the slot daemon's step makes (start-pkcsslotd.sh): the runbook's probes run openCryptoki's
    # tools as zrprobe, a listed member of pkcs11, never as root (review 2026-12 H-1).
    host.run_expect([0], "getent passwd zrprobe >/dev/null || useradd --system --no-create-home --home-dir /nonexistent"
                         " --shell /usr/sbin/nologin --user-group zrprobe; getent group pkcs11 | cut -d: -f4"
                         " | tr , '\\n' | grep -qx zrprobe || gpasswd -a zrprobe pkcs11 >/dev/null")
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


def _project_imports(path: Path) -> set[Path]:
    """The files of the project modules (zrunbook.*, checks.*) a Python file imports anywhere in it, and the
    __init__.py of each package on the way; relative imports resolved against the file's own package. Parsed once
    per version of the file (its size and modification time): the one-change loop asks this for every test file's
    imports, 10 000 times in a whole suite, and parsing each time cost 80 s before the first test."""
    stat = path.stat()
    return set(_imports_of(path, stat.st_mtime_ns, stat.st_size))


@functools.cache
def _imports_of(path: Path, _mtime_ns: int, _size: int) -> frozenset[Path]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(eng.REPO).parent.parts
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join((*package[: len(package) - node.level + 1], *([base] if base else [])))
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    found = set()
    for name in names:
        parts = name.split(".")
        if parts[0] not in ("zrunbook", "checks"):
            continue
        for depth in range(1, len(parts) + 1):
            for candidate in (eng.REPO.joinpath(*parts[:depth]).with_suffix(".py"),
                              eng.REPO.joinpath(*parts[:depth], "__init__.py")):
                if candidate.is_file():
                    found.add(candidate)
    return frozenset(found)


@dataclass(frozen=True)
class State:
    """A host state that is expensive to reach (a token initialised under qemu takes 20-40 s), made once
    and kept as an image: ``prepare(host)`` runs on a fresh container of the host image, the container's
    file system is committed, and every test marked ``@pytest.mark.from_state(STATE)`` gets a ``fresh_host``
    started from that image, with ``resume(host)`` run first (daemons do not survive a commit). The value
    ``prepare`` returns (JSON) is ``fresh_host.zr_prepared``.

    The image's tag hashes the host image, the state's name, every file under the snippet folders it
    draws on (``snippets``: folders or files under snippets/, whole folders so that no snippet a helper
    reads is missed), the other files it reads (``files``: a check's Java source), and exactly the Python
    it runs: the files ``prepare``, ``resume`` and ``stop`` are defined in and every project module they
    import, directly or through each other (``modules``: read from their import statements, lazy ones inside
    functions included), so a change to any of those makes the state again and nothing stale is reused, while
    a change to any other module (another chapter's, the verify tool's) leaves the state as it is. A test on a
    prepared state asserts exactly what it asserted when it did the preparation itself: the preparation's own
    assertions ran when the state was made, and a failed preparation makes no image.
    """

    name: str
    prepare: Callable[[object], object]
    resume: Callable[[object], None] = start_pkcsslotd
    snippets: tuple[str, ...] = ()
    stop: Callable[[object], None] = stop_pkcsslotd
    files: tuple[str, ...] = ()  # other repository files prepare reads (a check's Java source, a walk's pages)
    clean: bool = False  # made on the clean walkthrough host instead of the check host (checks/hosts/walks.py)

    def modules(self) -> list[Path]:
        """The project's Python files the preparation runs: where prepare, resume and stop are defined, and the
        project modules those import, transitively (with the packages' __init__ files Python runs on the way)."""
        todo = [eng.REPO / Path(inspect.getsourcefile(f)).resolve().relative_to(eng.ROOT)
                for f in (self.prepare, self.resume, self.stop)]
        seen: set[Path] = set()
        while todo:
            path = todo.pop()
            if path not in seen and path.is_file():
                seen.add(path)
                todo += _project_imports(path)
        return sorted(seen)

    def inputs(self) -> list[object]:
        files = {*self.modules(), *(eng.REPO / f for f in self.files)}
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
