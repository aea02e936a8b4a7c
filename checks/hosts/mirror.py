"""Debian mirror indices: verify them against the signed Release, and a narrow fallback when one does not.

Since the package locks (``checks/hosts/lock.py``) no build reads the mirror's indices: ``make lock`` reads
them with :func:`check_suite` and records an index that does not match as the evidence ``unverified-index``
(``ZR_INDEX_FALLBACK=refuse`` refuses it). The history and design below are how builds used the indices
before the locks; :class:`IndexProxy` and ``engine.index_plan`` are kept with their tests
(``checks/hosts/test_mirror.py``) and are no longer on the build path.

Why this exists
    Seen on this project's machines for more than a day: the mirror's
    ``dists/trixie/main/binary-s390x/Packages.xz`` (and ``.gz``) decompress to 53,939,893 bytes while the
    signed ``Release`` lists 53,955,175, and the ``by-hash`` copy is a 404. ``debootstrap`` and ``apt``
    then refuse the index, rightly, and the s390x host cannot be built at all, while the ``.deb`` files the
    served index names are on the mirror and downloadable.

The design (and why)
    1. Before a cold build the engine *checks* the indices a build of one architecture reads
       (``main/binary-<arch>`` and ``main/binary-all`` of each suite): the ``InRelease`` must verify with
       ``gpgv`` against Debian's archive keyring (never relaxed), and each index's size and SHA-256 are
       compared with the signed values. An index that does not match is downloaded a second time before
       it counts as a mismatch (a mirror caught mid-sync heals within seconds).
    2. When every index verifies, nothing changes: debootstrap and apt talk to the mirror directly and
       verify the signature and every index themselves. The fallback never touches an index that verifies.
    3. When an index does not match and the fallback is allowed (``ZR_INDEX_FALLBACK=allow``, the
       default; ``refuse`` turns it off), the build goes through :class:`IndexProxy`, a forward HTTP proxy
       on 127.0.0.1. It still verifies the signed ``InRelease`` itself, then serves a ``Release`` in which
       only the mismatched index's entries are replaced by the hashes of the bytes it serves (it keeps
       those bytes, so what it hashed is what the client gets). Every other index keeps its signed
       hash, and every ``.deb`` is still checked by debootstrap/apt against the index it came from.
       What is lost is exactly one link: the mismatched index is not covered by Debian's signature.
    4. That loss is never silent: the build prints it once, the images carry it as a label
       (``zrunbook.index``), the host plugin prints it once per run and writes it into ``results.json``,
       and the badges of that host say "packages unverified".

Alternatives rejected: waiting for the mirror (it did not heal in a day); a ``sid`` base for s390x (a
different suite from the amd64 host, so the two hosts would no longer test the same packages); skipping
the s390x host (a missing host must fail, never skip); ``[trusted=yes]`` on the real mirror (drops the
signature check for every index, not just the one that failed).

Only http mirrors can take the fallback (a forward proxy cannot rewrite https); the error says so.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import lzma
import os
import re
import subprocess
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
KEYRING_ENV = "ZR_DEBIAN_KEYRING"  # another keyring, for a mirror signed by another key (and the tests)
FALLBACK_ENV = "ZR_INDEX_FALLBACK"
HASH_FIELDS = ("MD5Sum", "SHA1", "SHA256", "SHA512")
COMPRESSIONS = ("", ".xz", ".gz", ".bz2", ".lzma", ".zst")
# urllib would honour http_proxy from the environment, and the proxy below sets it for its clients.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class MirrorError(RuntimeError):
    """The mirror cannot be used as it is; the message is one sentence saying why and what to do."""


def fallback_allowed() -> bool:
    value = os.environ.get(FALLBACK_ENV, "allow").strip().lower()
    if value not in ("allow", "refuse"):
        raise MirrorError(f"{FALLBACK_ENV} is {value!r}; it takes 'allow' (the default) or 'refuse'.")
    return value == "allow"


def debian_keyring() -> Path:
    return Path(os.environ.get(KEYRING_ENV) or DEBIAN_KEYRING)


def fetch(url: str, timeout: float = 120) -> bytes:
    with _OPENER.open(url, timeout=timeout) as resp:
        return resp.read()


def verify_inrelease(inrelease: bytes, keyring: Path) -> bytes:
    """The Release text that the clear-signed InRelease carries, after gpgv verified it against keyring."""
    if not keyring.is_file():
        raise MirrorError(f"the Debian archive keyring {keyring} is missing: apt-get install debian-archive-keyring.")
    with tempfile.TemporaryDirectory(prefix="zr-inrelease-") as tmp:
        signed, body = Path(tmp) / "InRelease", Path(tmp) / "Release"
        signed.write_bytes(inrelease)
        proc = subprocess.run(
            ["gpgv", "--status-fd", "1", "--keyring", str(keyring), "--output", str(body), str(signed)],
            capture_output=True, text=True,
        )  # fmt: skip
        if proc.returncode != 0 or "[GNUPG:] VALIDSIG" not in proc.stdout:
            why = (proc.stderr.strip().splitlines() or ["no valid signature"])[-1]
            raise MirrorError(f"the InRelease does not verify against {keyring} ({why})")
        return body.read_bytes()


@dataclass(frozen=True)
class Signed:
    size: int
    sha256: str


def parse_release(body: bytes) -> dict[str, Signed]:
    """path -> its signed size and SHA-256, from a Release file's SHA256 field."""
    entries: dict[str, Signed] = {}
    in_sha = False
    for line in body.decode().splitlines():
        if not line.startswith(" "):
            in_sha = line.startswith("SHA256:")
            continue
        if in_sha:
            digest, size, path = line.split()
            entries[path] = Signed(int(size), digest)
    return entries


@dataclass
class Mismatch:
    suite: str
    path: str  # relative to dists/<suite>/, e.g. main/binary-s390x/Packages.xz
    signed: Signed
    served: bytes = field(repr=False)

    @property
    def plain_path(self) -> str:
        return self.path.rsplit(".", 1)[0] if self.path.endswith((".xz", ".gz")) else self.path

    @functools.cached_property
    def plain(self) -> bytes | None:
        return _decompress(self.path, self.served)

    def describe(self) -> str:
        return (f"dists/{self.suite}/{self.path}: served {len(self.served):,} bytes, sha256 "
                f"{hashlib.sha256(self.served).hexdigest()[:16]}...; the signed Release lists "
                f"{self.signed.size:,} bytes, sha256 {self.signed.sha256[:16]}...")


@dataclass
class SuiteCheck:
    mirror: str
    suite: str
    arch: str
    inrelease: bytes
    release: bytes  # the verified text
    mismatches: list[Mismatch]
    good: dict[str, bytes] = field(default_factory=dict, repr=False)  # indices that matched, as fetched

    @property
    def verified(self) -> bool:
        return not self.mismatches

    def cached(self, allow: bool) -> dict[str, bytes]:
        """Index bytes the proxy serves itself, by path and by by-hash path: what was checked is served."""
        files = dict(self.good)
        if allow:
            for mm in self.mismatches:
                files[mm.path] = mm.served
                if mm.plain is not None:
                    files[mm.plain_path] = mm.plain
        out = {}
        for path, data in files.items():
            out[path] = data
            out[f"{path.rsplit('/', 1)[0]}/by-hash/SHA256/{hashlib.sha256(data).hexdigest()}"] = data
        return out


def index_paths(release: bytes, arch: str, components: tuple[str, ...] = ("main",)) -> list[str]:
    """The Packages index a client of arch downloads per component: .xz when listed, else .gz.

    binary-all is read only when the Release does not say ``No-Support-for-Architecture-all: Packages``
    (Debian's does: its arch:all packages are in every architecture's own index, and apt skips binary-all).
    """
    entries = parse_release(release)
    no_all = re.search(rb"^No-Support-for-Architecture-all: Packages$", release, re.M) is not None
    paths = []
    for comp in components:
        for a in (arch,) if no_all else (arch, "all"):
            for ext in (".xz", ".gz"):
                path = f"{comp}/binary-{a}/Packages{ext}"
                if path in entries:
                    paths.append(path)
                    break
    return paths


def check_suite(mirror: str, suite: str, arch: str, keyring: Path | None = None) -> SuiteCheck:
    """Verify suite's InRelease and compare the indices an arch build reads with their signed hashes.

    Each index is fetched as apt and debootstrap fetch it: by hash first when the Release says
    ``Acquire-By-Hash: yes`` (a mirror's by-name file may be a sync step ahead of or behind its Release),
    then by name.
    """
    base = f"{mirror.rstrip('/')}/dists/{suite}"
    keyring = keyring or debian_keyring()
    try:
        inrelease = fetch(f"{base}/InRelease")
    except (urllib.error.URLError, OSError) as exc:
        raise MirrorError(f"{base}/InRelease cannot be downloaded ({exc})") from None
    release = verify_inrelease(inrelease, keyring)
    entries = parse_release(release)
    by_hash = re.search(rb"^Acquire-By-Hash: yes$", release, re.M) is not None
    mismatches, good = [], {}
    for path in index_paths(release, arch):
        signed = entries[path]
        urls = [f"{base}/{path}"] * 2  # a second download before a mismatch counts
        if by_hash:
            urls.insert(0, f"{base}/{path.rsplit('/', 1)[0]}/by-hash/SHA256/{signed.sha256}")
        data = b""
        for url in urls:
            try:
                data = fetch(url)
            except urllib.error.HTTPError:
                continue  # a by-hash file that is gone
            except (urllib.error.URLError, OSError) as exc:
                raise MirrorError(f"{url} cannot be downloaded ({exc})") from None
            if len(data) == signed.size and hashlib.sha256(data).hexdigest() == signed.sha256:
                good[path] = data
                break
        else:
            mismatches.append(Mismatch(suite, path, signed, data))
    return SuiteCheck(mirror, suite, arch, inrelease, release, mismatches, good)


def _decompress(path: str, data: bytes) -> bytes | None:
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return gzip.decompress(data)
    return None


def rewrite_release(release: bytes, mismatches: list[Mismatch]) -> bytes:
    """The Release text with each mismatched index's entries replaced by the hashes of the served bytes.

    For a mismatched index only the served compressed file and its uncompressed form stay listed (its
    other compressions would not match either), and clients ask for the
    index by its new hash or name (the proxy serves the bytes it hashed). Nothing else changes.
    """
    replaced: dict[str, bytes] = {}
    dropped: set[str] = set()
    for m in mismatches:
        dropped |= {m.plain_path + ext for ext in COMPRESSIONS}
        replaced[m.path] = m.served
        if m.plain is not None:
            replaced[m.plain_path] = m.plain
    digests = {"MD5Sum": hashlib.md5, "SHA1": hashlib.sha1, "SHA256": hashlib.sha256, "SHA512": hashlib.sha512}
    out: list[str] = []
    section = None
    for line in release.decode().splitlines():
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
            out.append(line)
            if section in digests:
                for path, data in replaced.items():
                    out.append(f" {digests[section](data).hexdigest()} {len(data):>16} {path}")
            continue
        if section in HASH_FIELDS and line.split()[-1] in dropped:
            continue
        out.append(line)
    return ("\n".join(out) + "\n").encode()


class LocalServer:
    """A threaded HTTP server on 127.0.0.1 (a port of the moment) for one build, as a context manager.

    Subclasses answer in ``_handle(req, body)``; HEAD is answered like GET without the body."""

    def __init__(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet: the build log is the client's
                pass

            def do_GET(self):  # noqa: N802 (http.server's name)
                server._handle(self, body=True)

            def do_HEAD(self):  # noqa: N802
                server._handle(self, body=False)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handle(self, req: http.server.BaseHTTPRequestHandler, body: bool) -> None:
        raise NotImplementedError


class IndexProxy(LocalServer):
    """A forward HTTP proxy on 127.0.0.1 for one build: verified Release files, one narrow fallback.

    ``checks`` maps (mirror, suite) to the :class:`SuiteCheck` made before the build; a suite asked for
    that was not checked yet (sid, in the s390x image's second step) is checked on first use. For a suite
    that verifies, InRelease/Release/Release.gpg are the mirror's own bytes (the client checks the
    signature itself). For a suite with a mismatch: InRelease and Release.gpg are 404 and Release is the
    rewritten text (the client is told to trust the proxy: ``debootstrap --no-check-gpg``, apt
    ``Trusted: yes``) -- if the fallback is allowed; otherwise 403 and the refusal is recorded. Everything
    else (pool/, other indices) passes through unchanged.
    """

    def __init__(self, arch: str, *, allow: bool, keyring: Path | None = None,
                 checks: dict[tuple[str, str], SuiteCheck] | None = None):
        self.arch = arch
        self.allow = allow
        self.keyring = keyring or debian_keyring()
        self.checks = dict(checks or {})
        self.served_fallback: list[Mismatch] = []
        self.refused: list[str] = []
        self._lock = threading.Lock()
        super().__init__()

    def check(self, mirror: str, suite: str) -> SuiteCheck:
        with self._lock:
            key = (mirror, suite)
            if key not in self.checks:
                self.checks[key] = check_suite(mirror, suite, self.arch, self.keyring)
            return self.checks[key]

    def _handle(self, req: http.server.BaseHTTPRequestHandler, body: bool = True) -> None:
        url = req.path
        if not url.startswith("http://"):
            return self._reply(req, 400, b"zrunbook index proxy: only absolute http:// URLs (a forward proxy)\n")
        m = re.match(r"(http://.+)/dists/([^/]+)/(.+)$", url)
        if m:
            mirror, suite, rest = m.groups()
            try:
                check = self.check(mirror, suite)
            except MirrorError as exc:
                self.refused.append(str(exc))
                return self._reply(req, 502, f"zrunbook index proxy: {exc}\n".encode())
            if not check.verified and not self.allow:
                # Every dists/ file of the suite: a client told to trust the proxy would otherwise go on
                # without a Release and take the indices unchecked.
                return self._refuse(req, check)
            if rest in ("InRelease", "Release", "Release.gpg"):
                return self._release(req, check, rest)
            cached = check.cached(self.allow)
            if rest in cached:
                return self._reply(req, 200, cached[rest])
        self._pass_through(req, url)

    def _release(self, req, check: SuiteCheck, name: str) -> None:
        if check.verified:
            if name == "InRelease":
                return self._reply(req, 200, check.inrelease)
            if name == "Release":
                return self._reply(req, 200, check.release)
            return self._pass_through(req, req.path)
        if name != "Release":
            return self._reply(req, 404, b"zrunbook index proxy: the Release is rewritten, so it is not signed\n")
        with self._lock:
            for mm in check.mismatches:
                if mm not in self.served_fallback:
                    self.served_fallback.append(mm)
        self._reply(req, 200, rewrite_release(check.release, check.mismatches))

    def _refuse(self, req, check: SuiteCheck) -> None:
        detail = "; ".join(mm.describe() for mm in check.mismatches)
        with self._lock:
            self.refused.append(detail)
        self._reply(req, 403, f"zrunbook index proxy: refused ({FALLBACK_ENV}=refuse): {detail}\n".encode())

    @staticmethod
    def _reply(req, status: int, body: bytes) -> None:
        req.send_response(status)
        req.send_header("Content-Length", str(len(body)))
        req.send_header("Content-Type", "application/octet-stream")
        req.end_headers()
        req.wfile.write(body)

    def _pass_through(self, req, url: str) -> None:
        try:
            resp = _OPENER.open(url, timeout=300)
        except urllib.error.HTTPError as exc:
            return self._reply(req, exc.code, f"zrunbook index proxy: upstream {exc.code}\n".encode())
        except (urllib.error.URLError, OSError) as exc:
            return self._reply(req, 502, f"zrunbook index proxy: upstream unreachable: {exc}\n".encode())
        with resp:
            length = resp.headers.get("Content-Length")
            if length is None:
                return self._reply(req, 200, resp.read())
            req.send_response(200)
            req.send_header("Content-Length", length)
            req.send_header("Content-Type", resp.headers.get("Content-Type", "application/octet-stream"))
            req.end_headers()
            try:
                while chunk := resp.read(1 << 16):
                    req.wfile.write(chunk)
            except (TimeoutError, BrokenPipeError, ConnectionResetError):
                req.close_connection = True
