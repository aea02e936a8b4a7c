"""Observed inputs: the snippets, facts tables and negative cases each test really read, recorded as it runs.

Declarations (``@pytest.mark.snippet``) say what a test means to check; this module records what it touched,
through the layers every test already goes through, none of them a list kept by hand:

* **in this process**: Python's audit hook sees every ``open`` (a snippet read by a validator, a facts table by
  ``zrunbook.facts``, a bad file by the static checks, a file copied into a container with ``copy_to``) and every
  ``subprocess.Popen`` (``shellcheck FILE``, ``docker cp FILE ...``: a project file named in the command line);
* **in a container host**: the snippets are bind-mounted read-only at ``/snippets`` (checks/hosts/engine.py), and a
  fanotify mark on that mount, made inside the container's mount namespace when the container starts, reports
  every file any process there opens, however it was reached (``bash /snippets/x.sh``, a snippet calling its
  sibling, a ``cat`` inside a helper's command). Each event carries an open descriptor of the file; its device and
  inode name the snippet (the bind mount shares the inodes of ``snippets/``), so no path is parsed.

Attribution: the tests of one pytest process (an xdist worker) run one after another, so what is read between a
test's setup and the end of its teardown is that test's. A fixture wider than one test (module, class, session
scope) is set up by whichever test of the worker needs it first, which xdist's order decides: what it reads while it
is set up is kept apart (``Recorder.shared``) and judged against the fixture's own declarations. A container's
events are queued by the kernel when the file is opened, before the command that opened it returns, so draining the
queue at the end of the test misses nothing. What a prepared state's preparation read is not the test's: its key
covers it (checks/hosts/steps.py).

Needs root (``setns`` into the container's mount namespace, ``fanotify_init``): a container engine this user may
drive already needs it here; where it is refused, the first container says so in one sentence.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
import struct
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNIPPETS = REPO / "snippets"
FACTS = REPO / "facts"
CHECKS = REPO / "checks"
KINDS = ("snippets", "facts", "bad", "files")  # files: any other repository file but Python, read in this process
_NOT_FILES = {".git", ".tox", "build", "__pycache__", ".ruff_cache", ".pytest_cache"}
KEYS = ("images", "states")  # the container images and prepared states a test started from, by their tags

_FAN_CLOEXEC, _FAN_NONBLOCK, _FAN_CLASS_NOTIF = 0x1, 0x2, 0x0
_FAN_MARK_ADD, _FAN_MARK_MOUNT = 0x1, 0x10
_FAN_OPEN, _FAN_OPEN_EXEC = 0x20, 0x1000
_CLONE_NEWNS = 0x00020000
_AT_FDCWD = -100
_EVENT = struct.Struct("IBBHQii")  # fanotify_event_metadata: event_len, vers, reserved, metadata_len, mask, fd, pid


class ObserveError(RuntimeError):
    """Observation could not start; the message is a sentence for a person."""


def kind_of(path: Path) -> tuple[str, str] | None:
    """("snippets", rel) for a snippet, ("facts", rel) for a facts file, ("bad", rel-to-checks) for a negative
    case (a file under a ``bad`` or ``facts_bad`` folder of checks/), ("files", rel-to-the-repository) for any other
    file of the repository but Python (whose modules count by their imports: checks/reuse.py) and what tools
    write (.tox, build, caches); None outside the repository. ``path`` must be under the repository."""
    for kind, root in (("snippets", SNIPPETS), ("facts", FACTS)):
        if path.is_relative_to(root):
            return kind, path.relative_to(root).as_posix()
    if path.is_relative_to(CHECKS):
        rel = path.relative_to(CHECKS)
        if any(part in ("bad", "facts_bad") for part in rel.parts[:-1]) and not path.name.endswith(".pyc"):
            return "bad", rel.as_posix()
    rel = path.relative_to(REPO)
    if rel.parts and rel.parts[0] not in _NOT_FILES and "__pycache__" not in rel.parts \
            and path.suffix not in (".py", ".pyc"):
        return "files", rel.as_posix()
    return None


class Recorder:
    """One per pytest process: ``begin()`` before a test's setup, ``end()`` after its teardown returns what it
    read, by kind. ``watch(container, pid)`` adds a container host's /snippets mount; ``forget(container)`` drains
    it into the current test and closes it (before the container is removed)."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()
        self.recording = False
        self.marks: dict[str, int] = {}
        self._inodes: dict[tuple[int, int], str] | None = None
        self._prefix = str(REPO) + os.sep
        self._words = ("snippets", "facts", "bad", "checks", "docs", str(REPO))
        sys.addaudithook(self._audit)

    # --- this process -----------------------------------------------------------------------------------

    def _audit(self, event: str, args: tuple) -> None:
        if not self.recording:
            return
        if event == "open":
            self._note(args[0])
        elif event == "subprocess.Popen":
            argv, cwd = args[1], args[2]
            for arg in argv if isinstance(argv, (list, tuple)) else [argv]:
                if isinstance(arg, (str, os.PathLike)):
                    for word in os.fspath(arg).split():
                        if any(w in word for w in self._words):
                            self._note(word, cwd)

    def _note(self, name, cwd=None) -> None:
        if isinstance(name, int) or name is None:
            return
        name = os.fsdecode(name)
        if not os.path.isabs(name):
            name = os.path.join(os.fsdecode(cwd) if cwd else os.getcwd(), name)
        if not name.startswith(self._prefix):
            return
        path = Path(os.path.normpath(name))
        found = kind_of(path)
        if found and path.is_file():
            self.seen.add(found)

    # --- container hosts --------------------------------------------------------------------------------

    def watch(self, container: str, pid: int) -> None:
        """A fanotify mark on the /snippets mount of the container whose first process is pid: made by a forked
        child that enters the container's mount namespace, then handed back over a socket."""
        libc = _libc()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the fork
            code = 0
            try:
                ours.close()
                socket.send_fds(theirs, [b"ok"], [_mark_in_namespace(pid, "/snippets", libc)])
            except BaseException as exc:  # noqa: BLE001 - the parent words it
                theirs.send(str(exc).encode()[:500])
                code = 1
            os._exit(code)
        theirs.close()
        try:
            message, fds, _, _ = socket.recv_fds(ours, 600, 1)
        finally:
            ours.close()
            os.waitpid(child, 0)
        if not fds:
            raise ObserveError(f"Cannot observe what the tests read in container {container}: "
                               f"{message.decode(errors='replace') or 'the observer exited'}. The checks record "
                               "each test's inputs with fanotify inside the container (checks/observe.py), which "
                               "needs root; run make check as root.")
        self.marks[container] = fds[0]

    def forget(self, container: str) -> None:
        fd = self.marks.pop(container, None)
        if fd is not None:
            self._drain(fd)
            os.close(fd)

    def _drain(self, fd: int) -> None:
        while True:
            try:
                buf = os.read(fd, 65536)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(buf):
                length, _, _, _, _, efd, _ = _EVENT.unpack_from(buf, offset)
                offset += length
                if efd < 0:
                    continue
                try:
                    st = os.fstat(efd)
                finally:
                    os.close(efd)
                if self.recording:
                    rel = self._snippet_of(st.st_dev, st.st_ino)
                    if rel is not None:
                        self.seen.add(("snippets", rel))

    def _snippet_of(self, dev: int, ino: int) -> str | None:
        if self._inodes is None or (dev, ino) not in self._inodes:
            self._inodes = {}
            for path in SNIPPETS.rglob("*"):
                if path.is_file():
                    st = path.stat()
                    self._inodes[(st.st_dev, st.st_ino)] = path.relative_to(SNIPPETS).as_posix()
        return self._inodes.get((dev, ino))

    # --- one test ---------------------------------------------------------------------------------------

    def flush(self) -> None:
        """Move what the containers read so far into ``seen`` (the kernel queued it as the files were opened)."""
        for fd in self.marks.values():
            self._drain(fd)

    def snippets_seen(self) -> set[str]:
        self.flush()
        return {rel for kind, rel in self.seen if kind == "snippets"}

    def begin(self) -> None:
        self.recording = False
        for fd in self.marks.values():
            self._drain(fd)  # what a shared container read between tests is no test's
        self.seen = set()
        # a fixture wider than one test, set up during this test: its name -> (fixturedef, the node it belongs to,
        # the snippets read while it was set up); checked against the fixture's declarations, not the test's
        self.shared: dict[str, tuple[object, object, set[str]]] = {}
        self.keys: dict[str, dict[str, str]] = {key: {} for key in KEYS}
        self.recording = True

    def end(self) -> dict[str, object]:
        for fd in self.marks.values():
            self._drain(fd)
        self.recording = False
        return {**{kind: sorted(rel for k, rel in self.seen if k == kind) for kind in KINDS},
                **{key: dict(sorted(tags.items())) for key, tags in getattr(self, "keys", {}).items()}}

    def started_from(self, key: str, name: str, tag: str) -> None:
        """The test started a container of image or state ``name`` tagged ``tag`` (the tag hashes its inputs)."""
        if self.recording:
            self.keys[key][name] = tag

    @contextlib.contextmanager
    def quiet(self):
        """Reads that are not the test's: hashing a prepared state's inputs for its tag (the tag is recorded)."""
        was, self.recording = self.recording, False
        try:
            yield
        finally:
            self.recording = was


_LIBC: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL:
    """The C library with fanotify_mark's argument types, loaded in the parent: the forked child calls into it and
    must not dlopen (another thread of an xdist worker may hold the loader's lock at the fork)."""
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
        _LIBC.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]
    return _LIBC


def _mark_in_namespace(pid: int, mount: str, libc: ctypes.CDLL) -> int:
    ns = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)
    if libc.setns(ns, _CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), f"setns into /proc/{pid}/ns/mnt: {os.strerror(ctypes.get_errno())}")
    fd = libc.fanotify_init(_FAN_CLOEXEC | _FAN_NONBLOCK | _FAN_CLASS_NOTIF, os.O_RDONLY | os.O_LARGEFILE)
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"fanotify_init: {os.strerror(ctypes.get_errno())}")
    if libc.fanotify_mark(fd, _FAN_MARK_ADD | _FAN_MARK_MOUNT, _FAN_OPEN | _FAN_OPEN_EXEC, _AT_FDCWD,
                          mount.encode()) != 0:
        raise OSError(ctypes.get_errno(), f"fanotify_mark {mount}: {os.strerror(ctypes.get_errno())}")
    return fd


RECORDER: Recorder | None = None


def recorder() -> Recorder | None:
    return RECORDER


@contextlib.contextmanager
def quiet():
    """``Recorder.quiet`` of this process's recorder, or nothing when none records."""
    if RECORDER is None:
        yield
    else:
        with RECORDER.quiet():
            yield


def start() -> Recorder:
    global RECORDER
    if RECORDER is None:
        RECORDER = Recorder()
    return RECORDER
