"""pytest plugin: the container hosts ``debian13-amd64`` and ``debian13-s390x`` for testinfra checks.

Fixtures
    ``host``: a testinfra host (``testinfra.get_host("docker://<container>")``), parametrised over the
    selected hosts; the parameter value is the host name, so test ids read ``test_x[debian13-amd64]``.
    One shared container per host per session (per xdist worker): for read-only checks.
    ``fresh_host``: the same, but a new container for each test, removed after it: for tests that change
    state (token initialisation, usermod, files written).
    ``@pytest.mark.only_hosts("debian13-s390x")``: deselects (never skips) a host test's other hosts,
    for checks that only make sense on one architecture. amd64 already runs every host test, so a mark that
    leaves out the s390x host matters only for ``ZR_EVERY_HOST=1`` and must say what stops the test there:
    ``only_hosts("debian13-amd64", why="Pebble and certbot are in the amd64 image only")``; without ``why``
    it is a usage error.
    ``@pytest.mark.arch_dependent("why")``: a host test runs on the s390x host (under qemu, five to ten times
    slower) only when its outcome can depend on the architecture, and says why: the ICA token and libica,
    the ibmca provider, s390x library paths, packages that differ per architecture. Every other host test
    runs on amd64 only (deselected on s390x, never skipped), and its badges say so. ``ZR_EVERY_HOST=1`` runs
    every host test on every selected host.
    Each host object also carries ``zr_name`` (the host name) and ``zr_container`` (the container).
    ``zr_host_pool.start(host_name, *run_args, state=None)``: the one way a container is started (these
    fixtures, the prepared states, and a chapter's own fixture that needs ``docker run`` options such as
    ``--user``: checks/db2/conftest.py); labelled, removed with ``zr_host_pool.remove(host)``.

Helpers
    ``start_pkcsslotd(host)``: starts openCryptoki's slot daemon the way a container needs it.
    ``snippet_path("crypto/packages/verify-packages.sh")``: where ``snippets/<path>`` is inside every
    container (the repository's ``snippets/`` is mounted read-only at ``/snippets``).
    ``run_snippet(host, path, *args)``: runs it with bash and returns testinfra's CommandResult.

Host selection
    ``ZR_HOSTS``: comma-separated host names; default (unset or empty) both hosts. Example:
    ``ZR_HOSTS=debian13-amd64 pytest checks``.

Nothing runs at import or collection time: images are built (or found by their content-hash tag) and
containers started by the first test that asks for a host. A missing prerequisite (no engine, no
binfmt for s390x, no debootstrap when the base image must be built) is a test error whose message
says what to install; never a skip. Containers run with ``--network none``. No container outlives the
run: fixture finalizers, an atexit hook, SIGTERM/SIGHUP turned into KeyboardInterrupt, a sweep of
the whole run's containers when the (xdist controller) session ends, and at the first use in a
session a sweep of containers whose owner process died.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import testinfra

from checks import observe
from checks.hosts import engine as eng
from checks.hosts.steps import State, run_snippet, snippet_path, start_pkcsslotd, stop_pkcsslotd  # noqa: F401  (re-exported for fixtures)
from checks.hosts.token import refuse_printed_pins

ALL_HOSTS = tuple(eng.HOSTS)
S390X = "debian13-s390x"


def every_host() -> bool:
    """ZR_EVERY_HOST=1: every host test on every selected host, arch_dependent or not."""
    return os.environ.get("ZR_EVERY_HOST", "") not in ("", "0")
STATE_LABEL = "zrunbook.state-result"  # the JSON a State's prepare returned


def selected_hosts(value: str | None = None) -> list[str]:
    """The host names ZR_HOSTS selects (default: all), in the canonical order. Unknown names raise."""
    value = os.environ.get("ZR_HOSTS", "") if value is None else value
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = sorted(set(names) - set(ALL_HOSTS))
    if unknown:
        raise pytest.UsageError(f"ZR_HOSTS names unknown hosts {unknown}; known: {', '.join(ALL_HOSTS)}")
    return [h for h in ALL_HOSTS if h in names] if names else list(ALL_HOSTS)


def _params() -> list[str]:
    try:
        return selected_hosts()
    except pytest.UsageError:
        return list(ALL_HOSTS)  # reported by pytest_configure


SELECTED = _params()


class HostPool:
    """The containers of one pytest session (one xdist worker): built and started on first use."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self._engine: eng.Engine | None = None
        self._failure: Exception | None = None
        self._images: dict[str, str | Exception] = {}
        self.index: dict[str, str] = {}  # host -> "verified" or "unverified: ..." (the image's label)
        self._shared: dict[str, object] = {}
        self._names = itertools.count()

    def engine(self) -> eng.Engine:
        if self._failure is None and self._engine is None:
            try:
                self._engine = eng.Engine.detect()
                self._engine.sweep_orphans()
                eng.touch_run_marker(self.run_id)
            except Exception as exc:  # remembered: every later test fails the same way, fast
                self._failure = exc
        if self._failure is not None:
            _fail(self._failure)
        return self._engine

    def image(self, host_name: str) -> str:
        engine = self.engine()

        def build() -> str:
            tag = engine.ensure_image(eng.HOSTS[host_name])
            self.index[host_name] = engine.index_provenance(tag)
            return tag

        return self._once(host_name, f"run-{self.run_id}-{host_name}", build)

    def _once(self, key: str, lock: str, make: Callable[[], str], *, traceback: bool = False) -> str:
        """make() at most once per run across the xdist workers (a host image or a prepared state).

        A failure leaves a note in the run's folder: the test that met it reports it in full (with its
        traceback when ``traceback``: a preparation's own assertion), and the other worker and every later
        test fail at once with one sentence instead of trying again (debootstrap under qemu takes minutes
        and once failed the same way 80 times)."""
        if key not in self._images:
            note = eng.run_dir(self.run_id) / f"{key}.failed"
            with eng.file_lock(lock):
                if note.exists():
                    self._images[key] = _unavailable(key, note.read_text())
                else:
                    try:
                        self._images[key] = make()
                    except Exception as exc:
                        note.parent.mkdir(parents=True, exist_ok=True)
                        note.write_text(_sentence(exc))
                        self._images[key] = _unavailable(key, _sentence(exc))
                        if traceback and not isinstance(exc, _WORDED):
                            raise
                        _fail(exc)
        image = self._images[key]
        if isinstance(image, Exception):
            _fail(image)
        return image

    def walkthrough_image(self, host_name: str) -> str:
        """The clean walkthrough host of host_name: the debootstrap base and an offline package repository."""
        engine = self.engine()

        def build() -> str:
            tag = engine.ensure_image(eng.HOSTS[host_name], eng.WALKTHROUGH_CONTAINERFILE)
            self.index[host_name] = engine.index_provenance(tag)
            return tag

        return self._once(f"{host_name}-walkthrough", f"run-{self.run_id}-{host_name}-walkthrough", build)

    def start(self, host_name: str, *run_args: str, state: State | None = None, clean: bool = False,
              observed: bool = True, boot: bool = False):
        """A new container of host_name (of state's image when given; of the clean walkthrough image when
        ``clean``), labelled with the run and its owner and removed by ``remove(host)``, the run's sweep or
        the exit hook. run_args are further ``docker run`` options (``--user``, ``--cap-drop``...); the
        network stays ``none`` (Engine.start). ``boot``: systemd runs as the container's first process, and this
        returns once its start-up has finished (a unit that failed to start is the test's to read)."""
        if state is not None:
            image = self.prepared(host_name, state)  # on the clean host when state.clean
        else:
            image = self.walkthrough_image(host_name) if clean else self.image(host_name)
        engine = self.engine()
        name = f"zr-{host_name}-{self.run_id[:8]}-{os.getpid()}-{next(self._names)}"
        engine.start(eng.HOSTS[host_name], image, self.run_id, name, *run_args, boot=boot)
        recorder = observe.recorder()
        if observed and recorder is not None:  # what the tests read in it (checks/observe.py)
            recorder.watch(name, int(engine.run("inspect", "-f", "{{.State.Pid}}", name).stdout))
            recorder.started_from("states" if state else "images", f"{host_name}-{state.name}" if state
                                  else f"{host_name}-walkthrough" if clean else host_name, image)
        host = testinfra.get_host(f"{engine.scheme}://{name}")
        refuse_printed_pins(host)
        host.zr_container = name
        host.zr_name = host_name
        if boot:  # exit 1 with "degraded" when a unit failed (ssh, in a container without a network): still booted
            said = host.run("for i in $(seq 600); do test -S /run/systemd/private && break; sleep 0.1; done;"
                            " timeout 120 systemctl is-system-running --wait")
            if said.stdout.strip() not in ("running", "degraded"):
                raise AssertionError(f"systemd did not finish booting {name}: {said.stdout}{said.stderr}")
        if state is not None:
            host.zr_prepared = json.loads(engine.label(image, STATE_LABEL) or "null")
            state.resume(host)
        return host

    def prepared(self, host_name: str, state: State) -> str:
        """The image of state on host_name, made now if no image has its inputs' tag (once per run)."""
        base = self.walkthrough_image(host_name) if state.clean else self.image(host_name)
        engine = self.engine()
        with observe.quiet():  # hashing the state's inputs is not the test reading them: the tag is recorded
            tag = eng.lease(f"{eng.image_prefix()}/{host_name}-{state.name}:{eng._hash(base, state.inputs())}")

        def make() -> str:
            if engine.image_exists(tag):
                return tag
            # the preparation's reads are the state's, covered by its tag (recorded when a host starts from it), not
            # those of the test that happened to need the state first: a fresh clone makes every state in some test
            with observe.quiet():
                return self._make_state(engine, host_name, state, tag)

        return self._once(f"{host_name}-{state.name}", tag, make, traceback=True)

    def _make_state(self, engine: eng.Engine, host_name: str, state: State, tag: str) -> str:
        t0 = time.monotonic()
        host = self.start(host_name, clean=state.clean, observed=False)  # its key covers what it reads
        try:
            result = state.prepare(host)
            state.stop(host)
            engine.run("stop", "-t", "1", host.zr_container)
            engine.run("commit", "-c", 'CMD ["sleep", "infinity"]', "-c",
                       f"LABEL {STATE_LABEL}={json.dumps(json.dumps(result))}", host.zr_container, tag)
        finally:
            self.remove(host)
        eng._log(f"state {state.name} of {host_name} made in {time.monotonic() - t0:.0f} s: {tag}")
        engine.remove_stale_tags(tag)
        return tag

    def shared(self, host_name: str):
        if host_name not in self._shared:
            self._shared[host_name] = self.start(host_name)
        return self._shared[host_name]

    def remove(self, host) -> None:
        recorder = observe.recorder()
        if recorder is not None:
            recorder.forget(host.zr_container)
        if self._engine is not None:
            self._engine.remove(host.zr_container)

    def close(self) -> None:
        recorder = observe.recorder()
        for h in self._shared.values() if recorder is not None else ():
            recorder.forget(h.zr_container)
        if self._engine is not None:
            self._engine.remove(*(h.zr_container for h in self._shared.values()))
        self._shared.clear()


class HostUnavailable(RuntimeError):
    """A host image or prepared state that failed to build earlier in this run."""


def _unavailable(key: str, sentence: str) -> HostUnavailable:
    """What every test after the first one says: short, with the cause's opening words."""
    cause = sentence.split(" (", 1)[0]
    return HostUnavailable(f"{key} is not available in this run: its image build failed once and is not "
                           f"retried ({cause}; the first {key} error has the details).")


# Errors whose message is already a sentence for a person; others get their type name in front.
_WORDED = (eng.PrerequisiteError, eng.BuildError, eng.mir.MirrorError, eng.lk.LockError, HostUnavailable)


def _sentence(exc: Exception) -> str:
    return str(exc) if isinstance(exc, _WORDED) else f"{type(exc).__name__}: {exc}"


def _fail(exc: Exception):
    pytest.fail(f"container hosts: {_sentence(exc)}", pytrace=False)


# --- hooks -----------------------------------------------------------------------------------------


def pytest_addhooks(pluginmanager):
    """Block pytest-testinfra's own pytest plugin: its ``host`` fixture (parametrised by ``--hosts``)
    would otherwise shadow ours when it registers later (``-p checks.hosts.plugin``). testinfra stays
    importable as the library behind our fixtures."""
    for name in ("pytest11.testinfra", "testinfra", "testinfra.plugin"):
        pluginmanager.set_blocked(name)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    selected_hosts()  # a UsageError for unknown names, before anything runs
    config.addinivalue_line(
        "markers", "only_hosts(*names, why=None): run this host test on these container hosts only (others "
        "deselected); why= says what stops it on the s390x host when it leaves that host out"
    )
    config.addinivalue_line(
        "markers", "arch_dependent(why): this host test's outcome can depend on the architecture: it also runs "
        "on the s390x host (checks/hosts/plugin.py)"
    )
    config.addinivalue_line(
        "markers", "exclusive_cpu(why): run this test while no other test runs on this machine "
        "(checks/hosts/plugin.py cpu_share)"
    )
    config.addinivalue_line(
        "markers", "from_state(state): start fresh_host from this prepared State's image (checks/hosts/plugin.py)"
    )
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "zr_run_id" in workerinput:
        config.zr_run_id = workerinput["zr_run_id"]
    else:
        config.zr_run_id = uuid.uuid4().hex
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(IndexNotice(), "zr-index-notice")
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _raise_interrupt)


CPU_LOCK = Path(tempfile.gettempdir()) / "zrunbook-cpu.lock"
_CPU_LOCK_HELD = "ZR_CPU_LOCK_HELD"  # set while a test holds its share: a pytest it starts does not wait on it


@contextlib.contextmanager
def cpu_share(exclusive: bool, lock: Path = CPU_LOCK) -> Iterator[None]:
    """A readers-writer lock over tests, shared by every run on this machine: an ordinary test holds a shared
    share, an ``exclusive_cpu`` test the whole lock. A turnstile (a second file, taken first by everyone) stops
    the ordinary tests of other xdist workers from starving a waiting exclusive test."""
    if os.environ.get(_CPU_LOCK_HELD):
        yield
        return
    turnstile = lock.with_suffix(".turnstile")
    with open(turnstile, "a") as turn, open(lock, "a") as held:
        fcntl.flock(turn, fcntl.LOCK_EX)
        try:
            fcntl.flock(held, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turn, fcntl.LOCK_UN)
        os.environ[_CPU_LOCK_HELD] = "1"
        try:
            yield
        finally:
            del os.environ[_CPU_LOCK_HELD]
            fcntl.flock(held, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _zr_cpu_share(request):
    with cpu_share(request.node.get_closest_marker("exclusive_cpu") is not None):
        yield


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("only_hosts")
        callspec = getattr(item, "callspec", None)
        name = next((callspec.params[f] for f in ("host", "fresh_host", "clean_host") if f in callspec.params),
                    None) if callspec else None
        unknown = set(marker.args) - set(ALL_HOSTS) if marker else set()
        if unknown:
            raise pytest.UsageError(f"{item.nodeid}: only_hosts names unknown hosts {sorted(unknown)}")
        if marker and S390X not in marker.args and not str(marker.kwargs.get("why") or "").strip():
            raise pytest.UsageError(f"{item.nodeid}: only_hosts{marker.args} needs why=: amd64 already runs every "
                                    "host test, so the mark matters only for ZR_EVERY_HOST=1; say what stops the test "
                                    "on s390x, or remove the mark")
        # a chapter's own host fixture parametrized over host names (jdbc_host, liberty_host): ZR_HOSTS applies
        others = [v for v in (callspec.params.values() if callspec else ()) if isinstance(v, str) and v in ALL_HOSTS]
        unselected = any(v not in SELECTED for v in others)
        name = name if name is not None else next(iter(others), None)  # a module fixture's host (fleet_run, ...)
        arch = item.get_closest_marker("arch_dependent")
        if arch is not None and not (arch.args and str(arch.args[0]).strip()):
            raise pytest.UsageError(f"{item.nodeid}: arch_dependent needs a reason: why the outcome can differ "
                                    "on s390x")
        quiet = item.get_closest_marker("exclusive_cpu")
        if quiet is not None and not (quiet.args and str(quiet.args[0]).strip()):
            raise pytest.UsageError(f"{item.nodeid}: exclusive_cpu needs a reason: what CPU time the outcome "
                                    "depends on, and which test shows the starved case")
        on_s390x_only_if_declared = (name == S390X and not every_host() and arch is None
                                     and not (marker and S390X in marker.args))
        (drop if unselected or (marker and name is not None and name not in marker.args) or on_s390x_only_if_declared
         else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist: the workers share the controller's run id, so the controller can sweep the whole run."""
    node.workerinput["zr_run_id"] = node.config.zr_run_id


def pytest_unconfigure(config):
    """The controller (or a run without xdist) removes every container of the run, also a killed worker's."""
    run_id = getattr(config, "zr_run_id", None)
    if run_id is None or hasattr(config, "workerinput"):
        return
    marker = eng.run_marker(run_id)
    if not marker.exists():
        return  # no test of this run used a container host: do not touch the engine
    try:
        eng.Engine.detect().remove_run(run_id)
    finally:
        marker.unlink(missing_ok=True)
        shutil.rmtree(eng.run_dir(run_id), ignore_errors=True)


class IndexNotice:
    """Once per run, plainly: a host built from a Debian index that did not verify. Registered in the
    controller, which sees every test's report, so it prints once however many tests and workers used it."""

    def __init__(self):
        self.seen: dict[str, str] = {}

    def pytest_runtest_logreport(self, report):
        for key, value in report.user_properties:
            if key == "zr_host_index":
                self.seen[value[0]] = value[1]

    def pytest_terminal_summary(self, terminalreporter):
        for name, index in sorted(self.seen.items()):
            if index != "verified":
                terminalreporter.write_line(
                    f"WARNING: host {name} was built from a package lock not every entry of which Debian's signature "
                    f"covers ({index.removeprefix('unverified: ')}); its results are marked 'packages unverified'.",
                    yellow=True, bold=True)


# --- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def zr_host_pool(request):
    pool = HostPool(request.config.zr_run_id)
    yield pool
    pool.close()


@pytest.fixture(params=SELECTED, ids=str)
def host(request, zr_host_pool):
    """A testinfra host on the shared container of the selected host (read-only checks)."""
    h = zr_host_pool.shared(request.param)
    _record_index(request, zr_host_pool, request.param)
    return h


def _record_index(request, pool: HostPool, name: str) -> None:
    """The test's report carries its host image's index provenance (results.json, the badges)."""
    request.node.user_properties.append(("zr_host_index", [name, pool.index.get(name, "verified")]))


@pytest.fixture(params=SELECTED, ids=str)
def clean_host(request, zr_host_pool):
    """A new container of the clean walkthrough host (the debootstrap base, nothing the checks add, and an
    offline repository of the packages the pages may install), removed after the test. A test marked
    ``@pytest.mark.from_state(STATE)`` with a clean state (checks/hosts/walks.py) starts where that state's
    walk ended."""
    marker = request.node.get_closest_marker("from_state")
    state = marker.args[0] if marker else None
    if state is not None and not state.clean:
        raise pytest.UsageError(f"{request.node.nodeid}: clean_host takes clean states only, not {state.name}")
    h = zr_host_pool.start(request.param, state=state, clean=True)
    _record_index(request, zr_host_pool, request.param)
    yield h
    zr_host_pool.remove(h)


@pytest.fixture(params=SELECTED, ids=str)
def fresh_host(request, zr_host_pool):
    """A testinfra host on a new container, removed after the test (state-changing checks); started from
    a prepared state's image when the test is marked ``@pytest.mark.from_state(STATE)``."""
    marker = request.node.get_closest_marker("from_state")
    h = zr_host_pool.start(request.param, state=marker.args[0] if marker else None)
    _record_index(request, zr_host_pool, request.param)
    yield h
    zr_host_pool.remove(h)
