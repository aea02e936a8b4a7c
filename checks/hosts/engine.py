"""Container engine for the runbook's container hosts: detection, base and host images, containers.

Everything here is lazy: importing this module runs nothing. The pytest plugin
(``checks/hosts/plugin.py``) calls it from session fixtures; ``python -m checks.hosts.engine`` builds
images or sweeps leftovers by hand (``build [HOST...]``, ``sweep``, ``tags``, ``remove-prefix PREFIX``).

Images
    Both come from the host's package lock (``checks/hosts/lock.py``, ``checks/hosts/locks/<host>.tsv``), served
    to the build by a LockRepo on 127.0.0.1; no build reads today's index.
    ``<prefix>/base-debian13-<arch>:<hash>``: a Debian 13 root file system, ``debootstrap --variant=minbase``
    of the lock's base layer, then ``import``. The hash covers the recipe and the base layer's digest.
    ``<prefix>/<host>:<hash>``: ``checks/hosts/Containerfile`` built on that base. The hash covers the
    Containerfile and every build argument (base tag, architecture, the lock's digest). An image whose tag
    exists is never rebuilt. ``<prefix>`` is ``zrunbook`` unless ``ZR_IMAGE_PREFIX`` says otherwise (the
    benchmark uses its own prefix for cold builds, so it never deletes the real cache).

Containers
    Started with ``--network none``, ``--init`` and PID 1 ``sleep infinity``; the repository's
    ``snippets/`` is mounted read-only at ``/snippets``. Labels: ``zrunbook.run=<run id>`` (one pytest
    run, shared by its xdist workers), ``zrunbook.owner=<machine>:<pid>:<start time>`` (the process that
    started it) and ``zrunbook.host=<host name>``. ``sweep_orphans`` removes containers whose owner
    process is gone; ``remove_run`` removes all containers of one run.

Engines
    Docker is what is tested here. The engine's own client ``/usr/bin/docker`` is preferred over a
    ``docker`` first on PATH (which may lack buildx); builds use the legacy builder
    (``DOCKER_BUILDKIT=0``). Podman is used through the same CLI when it is the only engine; that path is
    untested on the build machines (Podman cannot start containers there). ``ZR_ENGINE`` names a client
    explicitly (a path, ``docker`` or ``podman``).

Environment: ``ZR_ENGINE``, ``ZR_IMAGE_PREFIX``, ``ZR_WORKDIR`` (debootstrap root file systems and
lock files; default ``/var/tmp/zrunbook-hosts``), ``ZR_DEBIAN_MIRROR``.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from checks.hosts import lock as lk
from checks.hosts import mirror as mir
from zrunbook import ROOT, SNIPPETS  # noqa: F401  (SNIPPETS: engine.SNIPPETS for the pool and the tests)

REPO = ROOT
CONTAINERFILE = Path(__file__).resolve().parent / "Containerfile"
WALKTHROUGH_CONTAINERFILE = CONTAINERFILE.with_name("Containerfile.walkthrough")


def host_packages(arch: str) -> list[str]:
    """The check host's packages, read from its Containerfile (the one list; the walkthrough's offline
    repository holds them and their dependencies)."""
    text = CONTAINERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    found = re.search(r'pkgs="([^"$]+)"', text)
    extra = re.search(rf'if \[ "\$ARCH" = {re.escape(arch)} \]; then pkgs="\$pkgs ([^"]+)"', text)
    if found is None:
        raise ValueError(f"{CONTAINERFILE}: no pkgs=\"...\" list")
    return found.group(1).split() + (extra.group(1).split() if extra else [])
SNIPPETS_IN_CONTAINER = "/snippets"
# systemd as a container's first process: tmpfs where it expects an empty /run and /tmp (its tmp.mount cannot mount
# in a container), and CAP_SYS_ADMIN, without which units that change user with kept capabilities (pkcsslotd) fail
# at spawning (status 217/USER). Not --privileged: this machine's engine refuses it.
BOOT_ARGS = ("--cap-add", "SYS_ADMIN", "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp")

SUITE = "trixie"
# Bump when the way the base image is made changes (it is part of the base tag's hash, with the base's lock).
BASE_RECIPE = {"suite": SUITE, "variant": "minbase", "recipe": 2, "from": "lock"}
# Image label saying whether every package the image was built from has its hash from a signed Debian index
# ("verified") or not ("unverified: <which packages, why>"); read from the lock (checks/hosts/lock.py).
INDEX_LABEL = "zrunbook.index"
PREREQS_SCRIPT = ".ci/hosts-prereqs.sh"
BINFMT_MISC = Path("/proc/sys/fs/binfmt_misc")
# Clients tried in order when ZR_ENGINE is unset: the engine's own docker client first (a `docker`
# first on PATH may lack buildx), then any docker, then Podman.
CANDIDATES = ("/usr/bin/docker", "docker", "podman")
APT_SOURCES = Path("/etc/apt")


@dataclass(frozen=True)
class HostSpec:
    name: str
    arch: str  # Debian architecture
    qemu: str | None  # binfmt_misc entry needed to run it, None when native


HOSTS = {
    "debian13-amd64": HostSpec("debian13-amd64", "amd64", None),
    "debian13-s390x": HostSpec("debian13-s390x", "s390x", "qemu-s390x"),
}


class PrerequisiteError(RuntimeError):
    """Something the machine lacks; the message says what to install and how."""


class BuildError(RuntimeError):
    """An image could not be built; the message is one sentence and names the full log."""


def write_log(tag: str, text: str) -> Path:
    """Keep a failed build's whole output in the work folder; the error names this file."""
    path = workdir() / "logs" / (re.sub(r"[^A-Za-z0-9_.-]", "_", tag) + ".log")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _last_error_line(text: str) -> str:
    """The line that says what went wrong: debootstrap's E:, apt's E:/Err:, or the last non-empty line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for prefix in ("E: ", "W: Failure", "Err:", "error", "ERROR"):
        hits = [ln for ln in lines if ln.startswith(prefix)]
        if hits:
            return hits[-1]
    return lines[-1] if lines else "no output"


def _log(msg: str) -> None:
    print(f"[zrunbook hosts] {msg}", file=sys.stderr, flush=True)


def _hash(*parts: object) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else json.dumps(part, sort_keys=True).encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def image_prefix() -> str:
    return os.environ.get("ZR_IMAGE_PREFIX", "zrunbook")


def workdir() -> Path:
    path = Path(os.environ.get("ZR_WORKDIR", "/var/tmp/zrunbook-hosts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_marker(run_id: str) -> Path:
    """A file that exists while run_id has started containers (the controller's cue to sweep).

    Only the path: nothing is created here, so asking whether a run left a marker touches no disk.
    ``touch_run_marker`` creates it, with its folders (a fresh machine has neither).
    """
    return Path(os.environ.get("ZR_WORKDIR", "/var/tmp/zrunbook-hosts")) / "runs" / run_id


def run_dir(run_id: str) -> Path:
    """Notes the workers of one run share (a host whose build failed); removed when the run ends."""
    return Path(os.environ.get("ZR_WORKDIR", "/var/tmp/zrunbook-hosts")) / "runs" / f"{run_id}.d"


def touch_run_marker(run_id: str) -> Path:
    marker = run_marker(run_id)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    return marker


@contextlib.contextmanager
def file_lock(name: str) -> Iterator[None]:
    """Serialise image builds between processes (xdist workers, parallel runs)."""
    path = workdir() / (re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".lock")
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


# A tag another run on this machine used in the last LEASE_HOURS is kept by remove_stale_tags: two runs
# from two checkouts whose snippets differ use two tags of the same state, and the one that builds its
# tag must not delete the other's between its build and its first container.
LEASE_HOURS = 12


def lease_path(tag: str) -> Path:
    return workdir() / "leases" / re.sub(r"[^A-Za-z0-9_.-]", "_", tag)


def lease(tag: str) -> str:
    """Record that this run uses tag (now); returns tag."""
    path = lease_path(tag)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    return tag


def leased(tag: str, now: float | None = None) -> bool:
    try:
        age = (time.time() if now is None else now) - lease_path(tag).stat().st_mtime
    except FileNotFoundError:
        return False
    return age < LEASE_HOURS * 3600


# --- machine facts -------------------------------------------------------------------------------


def _apt_uris() -> list[str]:
    uris: list[str] = []
    files = [APT_SOURCES / "sources.list", *sorted((APT_SOURCES / "sources.list.d").glob("*"))]
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if path.suffix == ".sources" and line.startswith("URIs:"):
                uris += line.split()[1:]
            elif line.startswith("deb "):
                uris += [w for w in line.split()[1:] if "://" in w][:1]
    return uris


def debian_mirror() -> str:
    """The Debian mirror configured on this machine (``ZR_DEBIAN_MIRROR`` first), or deb.debian.org.

    Only the main archive: the Containerfile uses the trixie suite alone (and sid for two packages on
    s390x), never a security mirror.
    """
    uris = _apt_uris()
    main = next((u for u in uris if re.search(r"/debian/?$", u)), "http://deb.debian.org/debian")
    return os.environ.get("ZR_DEBIAN_MIRROR", main.rstrip("/"))


def check_binfmt(spec: HostSpec) -> None:
    """Fail unless the kernel runs spec's binaries (qemu-user registered with the F flag)."""
    if spec.qemu is None:
        return
    how = (
        "apt-get install qemu-user-static binfmt-support, then update-binfmts --enable "
        f"{spec.qemu} (or run {PREREQS_SCRIPT} as root)"
    )
    root = BINFMT_MISC
    if not (root / "status").exists():
        raise PrerequisiteError(
            f"{spec.name} needs binfmt_misc, which is not mounted: mount -t binfmt_misc binfmt_misc {root}, then {how}."
        )
    entry = root / spec.qemu
    if not entry.exists():
        raise PrerequisiteError(f"{spec.name} needs qemu-user for {spec.arch} in binfmt_misc: {how}.")
    text = entry.read_text()
    if not text.startswith("enabled"):
        raise PrerequisiteError(f"binfmt entry {spec.qemu} is disabled: update-binfmts --enable {spec.qemu}.")
    flags = re.search(r"^flags: *(\S*)", text, re.M)
    if not flags or "F" not in flags.group(1):
        raise PrerequisiteError(
            f"binfmt entry {spec.qemu} lacks the F (fix binary) flag, so containers cannot find the "
            f"interpreter: use Debian's qemu-user-static package, which registers it with F ({how})."
        )


def _proc_start(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, starttime


def owner_label(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_proc_start(pid)}"


def owner_alive(label: str) -> bool:
    try:
        machine, pid, start = label.rsplit(":", 2)
    except ValueError:
        return False
    if machine != socket.gethostname():
        return True  # another machine's daemon client: not ours to judge
    return _proc_start(int(pid)) == start


def index_plan(spec: HostSpec, suites: tuple[str, ...]) -> dict[tuple[str, str], mir.SuiteCheck]:
    """Check the mirror's indices of spec's architecture; raise MirrorError when one fails and the fallback is
    refused (or impossible). Prints the loss of verification once, when there is one. (Builds read the lock,
    not the mirror's indices; ``make lock`` reads them with ``mir.check_suite`` and the same rule.)"""
    mirror = debian_mirror()
    checks = {(mirror, suite): mir.check_suite(mirror, suite, spec.arch) for suite in suites}
    mismatches = [m for c in checks.values() for m in c.mismatches]
    if not mismatches:
        return checks
    detail = "; ".join(m.describe() for m in mismatches)
    if not mir.fallback_allowed():
        raise mir.MirrorError(
            f"{spec.name} cannot be built because a mirror index does not match the signed Release ({detail}), "
            f"and {mir.FALLBACK_ENV}=refuse forbids building from it: wait for the mirror to heal, use another "
            f"mirror (ZR_DEBIAN_MIRROR), or unset {mir.FALLBACK_ENV} to build with that index unverified."
        )
    if not mirror.startswith("http://"):
        raise mir.MirrorError(
            f"{spec.name}: a mirror index does not match the signed Release ({detail}) and the fallback needs "
            f"an http:// mirror (it goes through a local proxy): set ZR_DEBIAN_MIRROR=http://deb.debian.org/debian."
        )
    _log(f"WARNING: {spec.name} is built from a Debian index that does not match the signed Release: {detail}. "
         "Every .deb is still checked against the index it came from, but that index is not covered by Debian's "
         f"signature; the image is labelled {INDEX_LABEL}=unverified and the results say so "
         f"({mir.FALLBACK_ENV}=refuse to refuse instead).")
    return checks


def unverified_detail(checks: dict[tuple[str, str], mir.SuiteCheck]) -> str:
    return "; ".join(m.describe() for c in checks.values() for m in c.mismatches)


# --- the engine ----------------------------------------------------------------------------------


class Engine:
    def __init__(self, cli: str, kind: str):
        self.cli = cli
        self.kind = kind  # "docker" or "podman"
        self.env = dict(os.environ, DOCKER_BUILDKIT="0")

    def __repr__(self) -> str:
        return f"Engine({self.cli!r}, {self.kind!r})"

    @property
    def scheme(self) -> str:
        """The testinfra connection scheme."""
        return self.kind

    @classmethod
    def detect(cls) -> Engine:
        wanted = os.environ.get("ZR_ENGINE")
        candidates = [wanted] if wanted else list(CANDIDATES)
        found: list[str] = []
        problems: list[str] = []
        for name in candidates:
            cli = shutil.which(name)
            if cli is None or os.path.realpath(cli) in found:
                continue
            found.append(os.path.realpath(cli))
            try:
                out = subprocess.run(
                    [cli, "info", "--format", "{{json .}}"], capture_output=True, text=True, timeout=30
                )
            except subprocess.TimeoutExpired:
                problems.append(f"`{cli} info` did not answer within 30 s")
                continue
            if out.returncode == 0:
                return cls(cli, "podman" if "podman" in os.path.basename(cli) else "docker")
            last = (out.stderr.strip().splitlines() or ["no output"])[-1]
            problems.append(f"`{cli} info` failed: {last}")
        if not found:
            raise PrerequisiteError(
                "No container engine found: install Docker (apt-get install docker.io) or Podman "
                f"(apt-get install podman), or run {PREREQS_SCRIPT} as root."
            )
        raise PrerequisiteError(
            "A container engine is installed but does not answer ("
            + "; ".join(problems)
            + "): start it (systemctl start docker; without systemd: dockerd >/var/log/dockerd.log 2>&1 &),"
            f" make sure this user may use it, or run {PREREQS_SCRIPT} as root."
        )

    def run(self, *args: str, check: bool = True, timeout: float | None = 120, **kw) -> subprocess.CompletedProcess:
        proc = subprocess.run([self.cli, *args], capture_output=True, text=True, env=self.env, timeout=timeout, **kw)
        if check and proc.returncode != 0:
            raise RuntimeError(f"{self.cli} {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def image_exists(self, tag: str) -> bool:
        return self.run("image", "inspect", "--format", "{{.Id}}", tag, check=False).returncode == 0

    def label(self, tag: str, name: str) -> str:
        """An image label's value ("" when it has none)."""
        fmt = f'{{{{index .Config.Labels "{name}"}}}}'
        out = self.run("image", "inspect", "--format", fmt, tag, check=False).stdout.strip()
        return "" if out == "<no value>" else out

    def index_provenance(self, tag: str) -> str:
        """"verified", or "unverified: ..." naming the index (the image's zrunbook.index label).

        Images built before the label existed were built only when every index verified (there was no
        fallback then), so a missing label reads "verified"."""
        fmt = f"{{{{index .Config.Labels \"{INDEX_LABEL}\"}}}}"
        out = self.run("image", "inspect", "--format", fmt, tag, check=False).stdout.strip()
        return out if out and out != "<no value>" else "verified"

    # --- images ---

    def base_tag(self, spec: HostSpec) -> str:
        digest = lk.read(spec.name).digest("base")
        return f"{image_prefix()}/base-debian13-{spec.arch}:{_hash(BASE_RECIPE, spec.arch, digest)}"

    def build_args(self, spec: HostSpec, containerfile: Path | None = None) -> dict[str, str]:
        """The Containerfile's ARGs, all in the tag's hash: the base, the architecture and the lock's digest
        (the build's http_proxy, a LockRepo on a port of the moment, is not an ARG of the file)."""
        args = {"BASE": self.base_tag(spec), "ARCH": spec.arch, "LOCK": lk.read(spec.name).digest()}
        if containerfile == WALKTHROUGH_CONTAINERFILE:
            args["PACKAGES"] = " ".join(host_packages(spec.arch))
        return args

    def image_tag(self, spec: HostSpec, containerfile: Path | None = None) -> str:
        containerfile = containerfile or CONTAINERFILE  # read at call time (the tests replace it)
        name = spec.name if containerfile == CONTAINERFILE else f"{spec.name}-walkthrough"
        return f"{image_prefix()}/{name}:{_hash(containerfile.read_bytes(), self.build_args(spec, containerfile))}"

    def ensure_base(self, spec: HostSpec) -> str:
        """The base image: debootstrap's minbase from exactly the base layer of the host's lock."""
        tag = self.base_tag(spec)
        if self.image_exists(tag):
            return tag
        with file_lock(tag):
            if self.image_exists(tag):
                return tag
            t0 = time.monotonic()
            self._debootstrap_base(spec, tag)
            _log(f"base {tag} from the lock with debootstrap in {time.monotonic() - t0:.0f} s")
        return tag

    def _debootstrap_base(self, spec: HostSpec, tag: str) -> None:
        if shutil.which("debootstrap") is None:
            raise PrerequisiteError(
                f"The base image {tag} must be built and debootstrap is missing: apt-get install debootstrap "
                f"(or run {PREREQS_SCRIPT} as root)."
            )
        if os.geteuid() != 0:
            raise PrerequisiteError(
                f"The base image {tag} must be built with debootstrap, which needs root: run the checks "
                f"once as root (or build it with `sudo python -m checks.hosts.engine build {spec.name}`)."
            )
        lock = lk.read(spec.name)
        rootfs = Path(tempfile.mkdtemp(prefix=f"rootfs-{spec.arch}-", dir=workdir()))
        try:
            # --no-check-gpg: the Release is the LockRepo's own; every .deb was checked against the lock
            # when it was fetched, and debootstrap checks each against the generated index (the lock's hashes).
            cmd = ["debootstrap", "--no-check-gpg", "--variant=minbase", f"--arch={spec.arch}", SUITE, str(rootfs),
                   lk.BUILD_MIRROR]
            with lk.build_repo(lock, "base") as repo:
                env = dict(os.environ, http_proxy=repo.url)
                _log(f"building base {tag} from {lock.path.name}'s {len(lock.layer('base'))} base packages: "
                     f"{' '.join(cmd)}")
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
            if proc.returncode != 0:
                log = rootfs / "debootstrap" / "debootstrap.log"
                tail = log.read_text()[-2000:] if log.exists() else proc.stderr[-2000:]
                detail = write_log(tag, f"{' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}\n{tail}")
                last = _last_error_line(proc.stdout + "\n" + proc.stderr + "\n" + tail)
                raise BuildError(f"debootstrap of {spec.name}'s base failed: {last} (log: {detail})")
            installed = subprocess.run(["chroot", str(rootfs), "dpkg-query", "-W", "-f", "${Package} ${Version}\n"],
                                       capture_output=True, text=True).stdout.split("\n")
            expected = {f"{e.package} {e.version}" for e in lock.layer("base")}
            got = {ln for ln in installed if ln}
            if got and got != expected:
                raise BuildError(f"{spec.name}'s base is not its lock's base layer: extra "
                                 f"{sorted(got - expected)[:5]}, missing {sorted(expected - got)[:5]}.")
            for leftover in (rootfs / "var/cache/apt/archives").glob("*.deb"):
                leftover.unlink()
            tar = subprocess.Popen(["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
            imp = subprocess.run(
                [self.cli, "import", "--change", 'CMD ["/bin/bash"]',
                 "--change", f"LABEL {INDEX_LABEL}={json.dumps(lock.provenance())}",
                 "--change", f"LABEL {lk.LOCK_LABEL}={lock.digest('base')}", "-", tag],
                stdin=tar.stdout,
                capture_output=True,
                text=True,
                env=self.env,
            )
            tar.stdout.close()
            if tar.wait() != 0 or imp.returncode != 0:
                raise RuntimeError(f"importing the root file system failed: {imp.stderr.strip()}")
        finally:
            shutil.rmtree(rootfs, ignore_errors=True)

    def ensure_image(self, spec: HostSpec, containerfile: Path | None = None) -> str:
        """The host image's tag, building the base and the image if their tags do not exist yet
        (``containerfile=WALKTHROUGH_CONTAINERFILE``: the clean walkthrough host with its offline repository).
        Both are built from the host's lock (checks/hosts/lock.py) through a LockRepo: no file the lock
        does not name reaches the image."""
        check_binfmt(spec)
        containerfile = containerfile or CONTAINERFILE
        tag = lease(self.image_tag(spec, containerfile))
        if self.image_exists(tag):
            return tag
        self.ensure_base(spec)
        with file_lock(tag):
            if self.image_exists(tag):
                return tag
            lock = lk.read(spec.name)
            t0 = time.monotonic()
            _log(f"building {tag} from {lock.path.name} (a few minutes; later runs reuse it)")
            args = ["build", "--force-rm", "--network", "host", "-t", tag, "-f", str(containerfile)]
            args += ["--label", f"zrunbook.inputs={tag.rsplit(':', 1)[1]}"]
            args += ["--label", f"{INDEX_LABEL}={lock.provenance()}", "--label", f"{lk.LOCK_LABEL}={lock.digest()}"]
            for key, value in self.build_args(spec, containerfile).items():
                args += ["--build-arg", f"{key}={value}"]
            dangling = self._dangling()
            try:
                with contextlib.ExitStack() as stack:
                    repo = stack.enter_context(lk.build_repo(lock, "image"))
                    # http_proxy is one of the engine's predefined build arguments: not in the image, not hashed.
                    args += ["--build-arg", f"http_proxy={repo.url}"]
                    context = stack.enter_context(tempfile.TemporaryDirectory(prefix="context-", dir=workdir()))
                    proc = self.run(*args, context, check=False, timeout=3600)
            finally:
                # A failed or interrupted build leaves its intermediate images behind: remove them
                # (rmi without -f leaves alone whatever another build is still using).
                for _ in range(40):  # the daemon may still be removing the failed step's container
                    leftovers = self._dangling() - dangling
                    if not leftovers or self.image_exists(tag):
                        break
                    self.run("rmi", *leftovers, check=False)
                    time.sleep(0.5)
            if proc.returncode != 0:
                log = write_log(tag, f"{' '.join(args)}\n{proc.stdout}\n{proc.stderr}")
                raise BuildError(f"building {tag} failed: {_last_error_line(proc.stderr + proc.stdout)} (log: {log})")
            _log(f"built {tag} in {time.monotonic() - t0:.0f} s")
            self.remove_stale_tags(tag)
        return tag

    def _dangling(self) -> set[str]:
        return set(self.run("images", "-q", "--no-trunc", "--filter", "dangling=true").stdout.split())

    def remove_stale_tags(self, tag: str) -> None:
        """Remove the host image's older tags (earlier Containerfiles, earlier snippets) that no run on this
        machine used in the last LEASE_HOURS (another checkout's run may be using one); base images are kept."""
        repo = tag.rsplit(":", 1)[0]
        tags = self.run("images", "--format", "{{.Repository}}:{{.Tag}}", repo).stdout.split()
        stale = [t for t in tags if t != tag and not leased(t)]
        if stale:
            self.run("rmi", *stale, check=False)

    # --- containers ---

    def start(self, spec: HostSpec, image: str, run_id: str, name: str, *run_args: str, boot: bool = False) -> str:
        """Start a container named name; it is registered for removal at exit before it exists.

        run_args are further ``run`` options (a user, dropped capabilities) placed before the image.
        Every container has ``--network none``: no check needs a network (a scanner on this machine
        enters the container's network namespace instead), so no caller can ask for one.

        ``boot``: systemd is the container's first process (BOOT_ARGS: what it needs in a container), so units,
        timers and Debian's apachectl behave as on a booted host; otherwise an init that only reaps and sleep."""
        _LIVE.add((self, name))
        init, command = (BOOT_ARGS, ("/lib/systemd/systemd",)) if boot else (("--init",), ("sleep", "infinity"))
        self.run(
            "run", "-d", *init, "--network", "none", "--name", name, "--hostname", spec.name,
            "--label", f"zrunbook.run={run_id}", "--label", f"zrunbook.owner={owner_label()}",
            "--label", f"zrunbook.host={spec.name}",
            "-v", f"{SNIPPETS}:{SNIPPETS_IN_CONTAINER}:ro",
            *run_args, image, *command,
        )  # fmt: skip
        return name

    def remove(self, *names: str) -> None:
        if names:
            self.run("rm", "-f", "-v", *names, check=False)
        for name in names:
            _LIVE.discard((self, name))

    def _labelled(self, label: str) -> list[tuple[str, str]]:
        out = self.run("ps", "-a", "--filter", f"label={label}", "--format", "{{.ID}}\t{{.Labels}}", check=False)
        rows = []
        for line in out.stdout.splitlines():
            cid, _, labels = line.partition("\t")
            rows.append((cid, labels))
        return rows

    def sweep_orphans(self) -> list[str]:
        """Remove containers left by runs whose process is gone (killed, or a crash before cleanup)."""
        dead = []
        for cid, labels in self._labelled("zrunbook.owner"):
            owner = re.search(r"zrunbook\.owner=([^,]+)", labels)
            if owner and not owner_alive(owner.group(1)):
                dead.append(cid)
        self.remove(*dead)
        return dead

    def remove_run(self, run_id: str) -> list[str]:
        ids = [cid for cid, _ in self._labelled(f"zrunbook.run={run_id}")]
        self.remove(*ids)
        return ids


_LIVE: set[tuple[Engine, str]] = set()


@atexit.register
def remove_live_containers() -> None:
    """Last resort at interpreter exit: remove every container this process started and still owns."""
    by_engine: dict[Engine, list[str]] = {}
    for engine, name in list(_LIVE):
        by_engine.setdefault(engine, []).append(name)
    for engine, names in by_engine.items():
        engine.remove(*names)


def main(argv: list[str]) -> int:
    cmd, *rest = argv or ["help"]
    if cmd == "build":
        engine = Engine.detect()
        for name in rest or list(HOSTS):
            print(engine.ensure_image(HOSTS[name]))
    elif cmd == "build-walkthrough":
        engine = Engine.detect()
        for name in rest or list(HOSTS):
            print(engine.ensure_image(HOSTS[name], WALKTHROUGH_CONTAINERFILE))
    elif cmd == "tags":
        engine = Engine.detect()
        for name in rest or list(HOSTS):
            print(name, engine.base_tag(HOSTS[name]), engine.image_tag(HOSTS[name]))
    elif cmd == "sweep":
        print("\n".join(Engine.detect().sweep_orphans()))
    elif cmd == "remove-prefix" and len(rest) == 1:
        engine = Engine.detect()
        tags = [t for t in engine.run("images", "--format", "{{.Repository}}:{{.Tag}}").stdout.split()
                if t.startswith(f"{rest[0]}/")]
        if tags:
            engine.run("rmi", *tags)
        for lock in workdir().glob(f"{rest[0]}_*.lock"):
            lock.unlink()
    else:
        print("usage: python -m checks.hosts.engine build [HOST...] | build-walkthrough [HOST...] | tags [HOST...] "
              "| sweep | remove-prefix PREFIX",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # clean up as after Ctrl-C
    try:
        sys.exit(main(sys.argv[1:]))
    except PrerequisiteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
