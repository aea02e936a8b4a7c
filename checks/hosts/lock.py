"""Locked package sets for the container hosts: recorded from signed indices, built from exactly those files.

Why this exists
    A fresh machine must build both hosts today, and the mirror moves under them: it once served an s390x
    index that did not match its signed Release (``mirror.py``), and later an index that matched but named
    files its pool did not serve yet (``libc6 2.41-12+deb13u5`` for s390x: 404, while ``+deb13u4`` was
    served). A build that reads today's index fails whenever the mirror is caught like that, and a machine
    with warm images never notices. So the hosts are built from a lock, never from today's index.

The lock (``checks/hosts/locks/<host>.tsv``, committed)
    One line per package the host needs: the layer (``base``: what debootstrap installs; ``image``: what the
    Containerfile adds), package, version, architecture, size, SHA-256, its path on the mirror (archive and
    pool path), and where the hash came from: the suite and date of the Release, and the evidence --
    ``signed`` (the index verified against Debian's signature when the lock was recorded), ``unverified-index``
    (the mirror's index did not match its signed Release; ``ZR_INDEX_FALLBACK=refuse`` refuses these) or
    ``first-seen`` (no index on the mirror names the file any more; its hash is that of the bytes the mirror
    served when a maintainer recorded it by hand with ``first-seen``). The lock's header lists each Release
    it was taken from.

Recording (``make lock``)
    For each host: read and verify the suites (``trixie`` and ``trixie-security``; on s390x also ``sid`` for
    ``openssl-ibmca`` and ``libica4`` only), take every version any index names plus the lock's own entries
    as candidates, keep the candidates the mirror serves (HEAD; a file the main pool lacks is looked for at
    the same hash in the security pool, which Debian fills with the same bytes), and let the machine's own
    apt resolve the host's package list (read from the Containerfile) over exactly those. Where both hosts
    need a package and the mirror serves a common version for both, both are pinned to the newest common one
    (so "the same openCryptoki on both hosts" is a fact of the locks). The new lock is written and its
    differences from the old are printed, one line per package: a reviewable diff.

Building
    Every locked ``.deb`` is downloaded once into ``<ZR_WORKDIR>/debs/<sha256>.deb`` and refused unless its
    SHA-256 and size are the lock's. A local forward proxy (:class:`LockRepo`, 127.0.0.1) then serves a
    Debian repository made of exactly those files: a generated ``Release`` and ``Packages`` (control fields
    from the ``.deb`` itself, hashes from the lock) and nothing else -- no request reaches the real mirror.
    debootstrap (``--no-check-gpg``: the Release is ours) and the Containerfile's apt (``Trusted: yes`` during
    the build only) install from it; apt still checks every ``.deb`` against the generated index, whose
    hashes are the lock's.

The probe (``make check``, before pytest)
    In parallel and in seconds: every locked file is still served at its size (HEAD), and every host image
    that exists carries the lock digest its tag was made from. A file the mirror no longer serves stops the
    run before pytest with one sentence naming the package, version and the command that fixes it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime
import email.utils
import gzip
import hashlib
import http.client
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from checks.hosts import mirror as mir

LOCKS = Path(__file__).resolve().parent / "locks"
COLUMNS = ("layer", "package", "version", "arch", "size", "sha256", "path", "suite", "date", "evidence")
EVIDENCE = ("signed", "unverified-index", "first-seen")
# The URL every build asks for (debootstrap's mirror argument, the images' apt sources); the build's
# http_proxy is a LockRepo, so nothing is fetched from it. The images' sources then look like a reader's.
BUILD_MIRROR = "http://deb.debian.org/debian"
SUITE = "trixie"
# Which suites each host's packages may come from: (archive, suite, only these packages or None for all).
SOURCES = {
    "amd64": (("debian", "trixie", None), ("debian-security", "trixie-security", None)),
    "s390x": (("debian", "trixie", None), ("debian-security", "trixie-security", None),
              ("debian", "sid", ("openssl-ibmca", "libica4"))),
}
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class LockError(RuntimeError):
    """The lock cannot be recorded, probed or built from; the message is one sentence saying what to do."""


@dataclasses.dataclass(frozen=True)
class Entry:
    layer: str
    package: str
    version: str
    arch: str
    size: int
    sha256: str
    path: str  # archive/pool path, e.g. debian/pool/main/g/glibc/libc6_2.41-12+deb13u4_s390x.deb
    suite: str
    date: str
    evidence: str

    def row(self) -> str:
        return "\t".join(str(getattr(self, c)) for c in COLUMNS)

    @property
    def name(self) -> str:
        return f"{self.package} {self.version} ({self.arch})"


@dataclasses.dataclass
class Lock:
    host: str
    arch: str
    entries: list[Entry]
    releases: list[str] = dataclasses.field(default_factory=list)  # header lines: the Releases read

    @property
    def path(self) -> Path:
        return LOCKS / f"{self.host}.tsv"

    def layer(self, layer: str) -> list[Entry]:
        return [e for e in self.entries if e.layer == layer]

    def text(self) -> str:
        head = [f"# {self.host}: the packages its image is built from (checks/hosts/lock.py; `make lock` rewrites it).",
                *(f"# release: {r}" for r in self.releases), "\t".join(COLUMNS)]
        rows = sorted(self.entries, key=lambda e: (e.layer != "base", e.package, e.arch))
        return "\n".join(head + [e.row() for e in rows]) + "\n"

    def digest(self, layer: str | None = None) -> str:
        rows = sorted(e.row() for e in self.entries if layer is None or e.layer == layer)
        return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]

    def provenance(self) -> str:
        """"verified" when every entry's hash came from a signed index, else "unverified: ..." naming them."""
        weak = [e for e in self.entries if e.evidence != "signed"]
        if not weak:
            return "verified"
        parts = []
        for evidence, what in (("unverified-index", "from an index that did not match its signed Release"),
                               ("first-seen", "pinned by the hash first served, no index names them")):
            names = sorted({e.package for e in weak if e.evidence == evidence})
            if names:
                shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
                parts.append(f"{len(names)} packages {what} ({shown})")
        return "unverified: " + "; ".join(parts)


def read(host: str, root: Path | None = None) -> Lock:
    path = (root or LOCKS) / f"{host}.tsv"
    if not path.is_file():
        raise LockError(f"{host} has no package lock ({path}): run `make lock` to record one, review it and commit it.")
    entries, releases, arch = [], [], ""
    header_seen = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("# release: "):
            releases.append(line.removeprefix("# release: "))
            continue
        if line.startswith("#") or not line.strip():
            continue
        cells = line.split("\t")
        if not header_seen:
            if tuple(cells) != COLUMNS:
                raise LockError(f"{path}:{n}: the header is not {' '.join(COLUMNS)}.")
            header_seen = True
            continue
        if len(cells) != len(COLUMNS) or cells[9] not in EVIDENCE or cells[0] not in ("base", "image"):
            raise LockError(f"{path}:{n}: a lock line has {len(COLUMNS)} tab-separated cells ending in one of "
                            f"{', '.join(EVIDENCE)}.")
        entry = Entry(*cells[:4], int(cells[4]), *cells[5:])  # type: ignore[arg-type]
        if not re.fullmatch(r"[0-9a-f]{64}", entry.sha256):
            raise LockError(f"{path}:{n}: {entry.package}'s SHA-256 is not 64 hex digits.")
        entries.append(entry)
        arch = arch or (entry.arch if entry.arch != "all" else "")
    return Lock(host, arch or host.rsplit("-", 1)[-1], entries, releases)


# --- where the files are ---------------------------------------------------------------------------------


def archive_url(archive: str) -> str:
    """The base URL of an archive (``debian``, ``debian-security``) on this machine's mirror."""
    from checks.hosts.engine import debian_mirror

    main = debian_mirror()
    if archive == "debian":
        return main
    if archive == "debian-security":
        return os.environ.get("ZR_DEBIAN_SECURITY_MIRROR") or re.sub(r"/debian/?$", "/debian-security", main)
    raise LockError(f"unknown archive {archive!r} in a lock path (debian or debian-security).")


def url(entry_path: str) -> str:
    archive, _, rest = entry_path.partition("/")
    return f"{archive_url(archive)}/{urllib.request.quote(rest)}"


_CONNECTIONS = threading.local()


def head(target: str, timeout: float = 10) -> tuple[int, int | None]:
    """(HTTP status, Content-Length) of a HEAD request; status 0 when the mirror did not answer.

    Each thread keeps one connection per mirror open (HTTP keep-alive): a new connection per request made
    552 requests take 66 s on this machine's mirror (some connections were never answered), one per thread
    about 2 s."""
    parts = urllib.parse.urlsplit(target)
    conns = _CONNECTIONS.__dict__.setdefault("by_host", {})
    for _ in range(3):
        conn = conns.get((parts.scheme, parts.netloc))
        if conn is None:
            cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
            conn = conns[(parts.scheme, parts.netloc)] = cls(parts.netloc, timeout=timeout)
        try:
            conn.request("HEAD", parts.path or "/")
            resp = conn.getresponse()
            resp.read()
            length = resp.getheader("Content-Length")
            return resp.status, int(length) if length is not None else None
        except (OSError, http.client.HTTPException):
            conn.close()
            conns.pop((parts.scheme, parts.netloc), None)
    return 0, None


def served(targets: Iterable[str], workers: int = 16) -> dict[str, tuple[int, int | None]]:
    """HEAD answers for targets, in parallel (each request is tried up to three times on a fresh connection
    when the connection fails: no answer is not a verdict)."""
    targets = list(dict.fromkeys(targets))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(targets, pool.map(head, targets), strict=True))


# --- the probe -------------------------------------------------------------------------------------------


def probe(hosts: Iterable[str], engine=None) -> str:
    """One line saying what was probed; LockError (one sentence) when a locked file is not served at its size
    or an existing image was built from another lock."""
    t0 = time.monotonic()
    locks = [read(h) for h in hosts]
    entries = {(e.path, e.size, e.sha256): e for lock in locks for e in lock.entries}
    answers = served(url(p) for p, _, _ in entries)
    bad = []
    for (path, size, _), entry in entries.items():
        status, length = answers[url(path)]
        if status != 200:
            bad.append((entry, f"HTTP {status}" if status else "no answer"))
        elif length is not None and length != size:
            bad.append((entry, f"{length:,} bytes, the lock says {size:,}"))
    if bad:
        first, why = bad[0]
        lock_of = next(lk for lk in locks if first in lk.entries)
        more = ""
        if len(bad) > 1:
            names = sorted({e.package for e, _ in bad[1:]})
            more = f" (and {len(bad) - 1} more: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})"
        raise LockError(
            f"The Debian mirror no longer serves {first.name}, locked in checks/hosts/locks/{lock_of.host}.tsv "
            f"({why}){more}: run `make lock` to move the lock to what the mirror serves now, review the diff "
            "and commit it.")
    stale = []
    if engine is not None:
        from checks.hosts import engine as eng

        for lock in locks:
            spec = eng.HOSTS[lock.host]
            tag = engine.image_tag(spec)
            if engine.image_exists(tag) and engine.label(tag, LOCK_LABEL) != lock.digest():
                stale.append(f"{tag} carries lock {engine.label(tag, LOCK_LABEL) or 'none'}, not {lock.digest()}")
    if stale:
        raise LockError("A host image does not match its lock (" + "; ".join(stale) + "): remove it with "
                        "`python -m checks.hosts.engine remove-prefix zrunbook` and run `make check` again.")
    per_host = ", ".join(f"{lk.host} {len(lk.entries)}" for lk in locks)
    return (f"lock probe: every locked package is served by the mirror ({per_host}; {len(entries)} files) "
            f"in {time.monotonic() - t0:.1f} s")


LOCK_LABEL = "zrunbook.lock"


# --- fetching and the build's repository ------------------------------------------------------------------


def deb_cache() -> Path:
    from checks.hosts.engine import workdir

    path = workdir() / "debs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def fetch(entry: Entry, cache: Path | None = None) -> Path:
    """The locked file in the cache, downloaded when missing; refused unless its bytes are the lock's."""
    cache = cache or deb_cache()
    dest = cache / f"{entry.sha256}.deb"
    if dest.is_file():
        return dest
    try:
        data = mir.fetch(url(entry.path), timeout=600)
    except urllib.error.HTTPError as exc:
        raise LockError(f"The Debian mirror does not serve {entry.name} (HTTP {exc.code} for {url(entry.path)}): "
                        "run `make lock` to move the lock to what the mirror serves now.") from None
    except (urllib.error.URLError, OSError) as exc:
        raise LockError(f"{url(entry.path)} cannot be downloaded ({exc}).") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry.sha256 or len(data) != entry.size:
        raise LockError(
            f"The mirror served {entry.name} with SHA-256 {digest[:16]}... ({len(data):,} bytes), but the lock "
            f"records {entry.sha256[:16]}... ({entry.size:,} bytes): the file was not used; if Debian really "
            "replaced it, run `make lock` and review the diff.")
    tmp = dest.with_suffix(f".part{os.getpid()}")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return dest


def fetch_all(entries: Iterable[Entry], cache: Path | None = None, workers: int = 8) -> dict[Entry, Path]:
    entries = list(entries)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(entries, pool.map(lambda e: fetch(e, cache), entries), strict=True))


def control(deb: Path) -> str:
    """The .deb's own control stanza (what apt and debootstrap resolve with), cached beside it."""
    cached = deb.with_suffix(".control")
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    out = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True, check=True).stdout
    cached.write_text(out, encoding="utf-8")
    return out


def repo_files(entries: list[Entry], files: dict[Entry, Path], arch: str, *, required: bool) -> dict[str, bytes]:
    """A one-suite Debian repository of exactly entries: path under the mirror -> bytes (pool files by path).

    ``required``: every package gets ``Priority: required``, so debootstrap's minbase installs exactly the
    locked base (its own selection is the required packages, apt and their dependencies)."""
    stanzas = []
    pool: dict[str, Path] = {}
    for e in sorted(entries, key=lambda e: e.package):
        text = control(files[e]).rstrip("\n")
        if required:
            text = re.sub(r"^Priority: .*$", "Priority: required", text, flags=re.M)
            if "\nPriority:" not in "\n" + text:
                text += "\nPriority: required"
        filename = f"pool/locked/{e.sha256[:2]}/{e.package}_{e.version.split(':')[-1]}_{e.arch}.deb"
        pool[filename] = files[e]
        stanzas.append(f"{text}\nFilename: {filename}\nSize: {e.size}\nSHA256: {e.sha256}\n")
    packages = "\n".join(stanzas + [""]).encode()  # a blank line after the last stanza too: debootstrap needs it
    index = f"main/binary-{arch}/Packages"
    indices = {index: packages, f"{index}.gz": gzip.compress(packages, mtime=0)}
    date = email.utils.format_datetime(datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC), usegmt=True)
    release = [f"Origin: zrunbook lock\nLabel: zrunbook lock\nSuite: stable\nCodename: {SUITE}\nDate: {date}",
               f"Architectures: {arch}\nComponents: main\nNo-Support-for-Architecture-all: Packages", "SHA256:"]
    release += [f" {hashlib.sha256(d).hexdigest()} {len(d):>12} {p}" for p, d in sorted(indices.items())]
    files_out: dict[str, bytes | Path] = {f"dists/{SUITE}/Release": ("\n".join(release) + "\n").encode()}
    files_out.update({f"dists/{SUITE}/{p}": d for p, d in indices.items()})
    files_out.update(pool)
    return files_out  # type: ignore[return-value]


class LockRepo(mir.LocalServer):
    """A forward HTTP proxy on 127.0.0.1 serving a build the locked repository and nothing else.

    Any ``http://HOST/PREFIX/dists/trixie/...`` or ``.../pool/locked/...`` is answered from the files; every
    other request (InRelease, another suite, the real pool) is a 404, so a build cannot pick up a file
    the lock does not name. ``requests`` counts what was asked for."""

    def __init__(self, files: dict[str, bytes | Path]):
        self.files = files
        self.requests: list[str] = []
        super().__init__()

    def _handle(self, req, body: bool) -> None:
        self.requests.append(req.path)
        m = re.search(r"/((?:dists|pool)/.+)$", urllib.request.unquote(req.path.split("?", 1)[0]))
        data = self.files.get(m.group(1)) if m else None
        if data is None:
            msg = b"zrunbook lock repository: not in the lock\n"
            req.send_response(404)
            req.send_header("Content-Length", str(len(msg)))
            req.end_headers()
            if body:
                req.wfile.write(msg)
            return
        blob = data.read_bytes() if isinstance(data, Path) else data
        req.send_response(200)
        req.send_header("Content-Length", str(len(blob)))
        req.send_header("Content-Type", "application/octet-stream")
        req.end_headers()
        if body:
            try:
                req.wfile.write(blob)
            except (BrokenPipeError, ConnectionResetError):
                req.close_connection = True


@contextlib.contextmanager
def build_repo(lock: Lock, layer: str):
    """The LockRepo a build of lock's layer (``base``: the debootstrap set; ``image``: everything) reads."""
    entries = lock.layer("base") if layer == "base" else lock.entries
    files = fetch_all(entries)
    with LockRepo(repo_files(entries, files, lock.arch, required=layer == "base")) as repo:
        yield repo


# --- recording --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Candidate:
    package: str
    version: str
    arch: str
    size: int
    sha256: str
    paths: list[str]  # where the mirror may have it, first the index's own
    suite: str
    date: str
    evidence: str
    stanza: str
    served_path: str | None = None


def parse_packages(text: str) -> list[dict[str, str]]:
    out = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for m in re.finditer(r"^([A-Za-z0-9-]+):[ \t]?(.*(?:\n[ \t].*)*)", block, re.M):
            fields[m.group(1)] = m.group(2)
        if "Package" in fields:
            fields["_raw"] = block.strip("\n")
            out.append(fields)
    return out


def release_date(release: bytes) -> str:
    m = re.search(rb"^Date: (.+)$", release, re.M)
    if not m:
        return "unknown"
    return email.utils.parsedate_to_datetime(m.group(1).decode()).strftime("%Y-%m-%d")


def read_sources(arch: str, sources=None, keyring: Path | None = None) -> tuple[list[Candidate], list[str]]:
    """Every version the suites' indices name for arch, and one header line per Release read."""
    cands, releases = [], []
    for archive, suite, only in sources or SOURCES[arch]:
        base = archive_url(archive)
        check = mir.check_suite(base, suite, arch, keyring)
        if check.mismatches and not mir.fallback_allowed():
            raise LockError(f"{base}/dists/{suite}: " + "; ".join(m.describe() for m in check.mismatches)
                            + f", and {mir.FALLBACK_ENV}=refuse forbids recording from it.")
        date = release_date(check.release)
        evidence = "unverified-index" if check.mismatches else "signed"
        releases.append(f"{archive} {suite} {arch} {date} {evidence}")
        datas = dict(check.good)
        datas.update({m.path: m.served for m in check.mismatches})
        for path, data in datas.items():
            text = (mir._decompress(path, data) or data).decode("utf-8", "replace")
            for f in parse_packages(text):
                if only is not None and f["Package"] not in only:
                    continue
                if f.get("Architecture") not in (arch, "all"):
                    continue
                pool_path = f"{archive}/{f['Filename']}"
                paths = [pool_path]
                if archive == "debian":  # the security pool holds the same bytes of the same build
                    paths.append("debian-security/" + f["Filename"].replace("pool/main/", "pool/updates/main/", 1))
                cands.append(Candidate(f["Package"], f["Version"], f["Architecture"], int(f["Size"]), f["SHA256"],
                                       paths, suite, date, evidence, f["_raw"]))
    return cands, releases


def _apt_root(base: Path, arch: str) -> dict[str, str]:
    for sub in ("etc/apt/sources.list.d", "etc/apt/apt.conf.d", "etc/apt/preferences.d", "var/lib/apt/lists/partial",
                "var/cache/apt/archives/partial", "var/lib/dpkg", "repo"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    (base / "var/lib/dpkg/status").touch()
    (base / "etc/apt/sources.list.d/lock.sources").write_text(
        f"Types: deb\nURIs: file:{base}/repo\nSuites: ./\nTrusted: yes\n")
    conf = [f'Dir "{base}/";', 'Dir::State::status "var/lib/dpkg/status";', 'Dir::Etc::sourcelist "/dev/null";',
            f'APT::Architecture "{arch}";', f'APT::Architectures {{ "{arch}"; }};', 'Acquire::Languages "none";',
            'APT::Install-Recommends "false";', 'Debug::NoLocking "true";', 'APT::Sandbox::User "root";',
            'Dir::Etc::trusted "/dev/null";', 'Dir::Etc::trustedparts "/dev/null";']
    (base / "apt.conf").write_text("\n".join(conf) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    return dict(env, APT_CONFIG=str(base / "apt.conf"), LC_ALL="C")


def resolve(arch: str, cands: list[Candidate], wanted: list[str], pins: dict[str, str]) -> dict[str, Candidate]:
    """What the machine's apt installs for wanted on an empty arch system when only cands exist (pinned)."""
    with tempfile.TemporaryDirectory(prefix="zr-lock-apt-") as tmp:
        env = _apt_root(Path(tmp), arch)
        by_key = {}
        stanzas = []
        for c in cands:
            if (c.package, c.version) in by_key:
                continue
            by_key[(c.package, c.version)] = c
            raw = re.sub(r"^(Filename|Size|MD5sum|SHA1|SHA256|SHA512|Description-md5):.*\n?", "", c.stanza + "\n",
                         flags=re.M).rstrip("\n")
            stanzas.append(f"{raw}\nFilename: x/{c.sha256}.deb\nSize: {c.size}\nSHA256: {c.sha256}\n")
        (Path(tmp) / "repo/Packages").write_text("\n".join(stanzas))
        (Path(tmp) / "etc/apt/preferences.d/pins").write_text(
            "".join(f"Package: {p}\nPin: version {v}\nPin-Priority: 1001\n\n" for p, v in sorted(pins.items())))
        up = subprocess.run(["apt-get", "-q", "update"], env=env, capture_output=True, text=True)
        if up.returncode != 0:
            raise LockError(f"apt-get update over the candidates failed: {up.stderr.strip()[-300:]}")
        sim = subprocess.run(["apt-get", "-s", "-q", "-y", "install", *wanted], env=env, capture_output=True,
                             text=True)
        if sim.returncode != 0:
            text = sim.stdout + sim.stderr
            why = " ".join(ln.strip() for ln in text.splitlines()
                           if " : Depends" in ln or ln.startswith("E:") or "has no installation candidate" in ln)
            err = LockError(f"apt cannot install the {arch} host's packages from what the mirror serves: {why[:600]}")
            # "apache2 : Depends: apache2-data (= 2.4.69-1~deb13u1) but it is not going to be installed": apt
            # considers only each package's best candidate, so the caller pins the exact version and retries.
            err.exact = re.findall(r"Depends: (\S+) \(= (\S+)\) but", text)  # type: ignore[attr-defined]
            raise err
        chosen = {}
        for m in re.finditer(r"^Inst (\S+) (?:\[\S+\] )?\((\S+) ", sim.stdout, re.M):
            chosen[m.group(1)] = by_key[(m.group(1), m.group(2))]
        return chosen


def relevant(cands: list[Candidate], wanted: Iterable[str]) -> list[Candidate]:
    """The candidates apt could reach from wanted (every alternative and provider of every dependency): a few
    hundred of the index's tens of thousands, so each resolution reads a small index."""
    by_name: dict[str, list[Candidate]] = {}
    for c in cands:
        by_name.setdefault(c.package, []).append(c)
        for prov in re.findall(r"^Provides: (.+)$", c.stanza, re.M):
            for name in re.split(r"\s*,\s*", prov):
                by_name.setdefault(name.split()[0].split(":")[0], []).append(c)
    seen: set[int] = set()
    todo = list(wanted)
    names_done: set[str] = set()
    out = []
    while todo:
        name = todo.pop()
        if name in names_done:
            continue
        names_done.add(name)
        for c in by_name.get(name, []):
            if id(c) in seen:
                continue
            seen.add(id(c))
            out.append(c)
            for field in re.findall(r"^(?:Pre-)?Depends: (.+)$", c.stanza, re.M):
                todo += [alt.split()[0].split(":")[0] for alt in re.split(r"\s*[,|]\s*", field) if alt.strip()]
    return out


def _debug(msg: str) -> None:
    if os.environ.get("ZR_LOCK_DEBUG"):
        print(f"[lock] {msg}", file=sys.stderr, flush=True)


def dpkg_newer(a: str, b: str) -> bool:
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0


def record(hosts: dict[str, tuple[str, list[str], list[str]]], old: dict[str, Lock] | None = None,
           sources: dict | None = None, keyring: Path | None = None, log=print) -> dict[str, Lock]:
    """New locks for hosts: host -> (arch, the base's package names or [] for Priority: required + apt, the
    image's package names). ``old`` locks' entries stay candidates (their evidence kept)."""
    old = old or {}
    pools: dict[str, list[Candidate]] = {}
    releases: dict[str, list[str]] = {}
    for host, (arch, _, _) in hosts.items():
        cands, rels = read_sources(arch, (sources or SOURCES)[arch] if sources else None, keyring)
        known = {(c.package, c.version, c.arch) for c in cands}
        for e in old.get(host, Lock(host, arch, [])).entries:
            if (e.package, e.version, e.arch) in known:
                continue
            stanza = _stanza_of(e)
            cands.append(Candidate(e.package, e.version, e.arch, e.size, e.sha256, [e.path], e.suite, e.date,
                                   e.evidence, stanza))
        arch, base, image = hosts[host]
        required = {c.package for c in cands if re.search(r"^Priority: required$", c.stanza, re.M)}
        pools[host], releases[host] = relevant(cands, set(base or required) | {"apt"} | set(image)), rels
    # Resolve over every candidate; probe (HEAD) only what apt picked, drop what the mirror does not serve
    # (a candidate with another path is tried there), and resolve again until every pick is served. Then
    # align the hosts on the newest version both are served, and resolve again.
    answers: dict[str, tuple[int, int | None]] = {}
    pins: dict[str, dict[str, str]] = {h: {} for h in hosts}  # per host: package -> version
    needed: dict[str, set[str]] = {h: set() for h in hosts}  # pinned for another package's (= version)
    wanted = {}
    for host, (_arch, base, image) in hosts.items():
        base = base or sorted({c.package for c in pools[host] if re.search(r"^Priority: required$", c.stanza, re.M)}
                              | {"apt"})
        wanted[host] = (base, sorted(set(base) | set(image)))
    dropped: dict[str, list[Candidate]] = {h: [] for h in hosts}
    def view(h: str) -> list[Candidate]:
        """The candidates apt may choose from: a package with a signed candidate left takes only signed ones
        (the stronger evidence over the newer version), unless the hosts' alignment pinned another."""
        signed = {c.package for c in pools[h] if c.evidence == "signed"}
        return [c for c in pools[h]
                if c.evidence == "signed" or c.package not in signed or pins[h].get(c.package) == c.version]

    for _ in range(30):
        chosen = {}
        for h in hosts:
            try:
                chosen[h] = resolve(hosts[h][0], view(h), wanted[h][1], pins[h])
            except LockError as exc:
                exact = [(p, v) for p, v in getattr(exc, "exact", [])
                         if pins[h].get(p) != v and any(c.package == p and c.version == v for c in pools[h])]
                if exact:
                    pins[h].update(exact)
                    needed[h].update(p for p, _ in exact)
                    _debug(f"{h}: pinned {exact}")
                    break
                gone = sorted({f"{c.package} {c.version}" for c in dropped[h]})
                raise LockError(
                    f"{exc} (not served: {', '.join(gone[:20]) or 'nothing'}; record a version the mirror serves "
                    "by hand with `python -m checks.hosts.lock first-seen HOST PACKAGE=VERSION`)") from None
        if len(chosen) < len(hosts):
            continue  # pinned an exact version apt needed: resolve again
        todo = [url(p) for h in hosts for c in chosen[h].values() if c.served_path is None for p in c.paths]
        answers.update(served(t for t in todo if t not in answers))
        changed = False
        for h in hosts:
            for c in chosen[h].values():
                if c.served_path is None:
                    c.served_path = next((p for p in c.paths if answers[url(p)][0] == 200), None)
                    if c.served_path is None:
                        pools[h].remove(c)
                        dropped[h].append(c)
                        _debug(f"{h}: not served {c.package} {c.version}")
                        pins[h] = {p: v for p, v in pins[h].items() if not (p == c.package and v == c.version)}
                        changed = True
        if changed:
            continue
        names = list(hosts)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                for pkg in set(chosen[a]) & set(chosen[b]):
                    va, vb = chosen[a][pkg].version, chosen[b][pkg].version
                    if va == vb or pkg in needed[a] | needed[b]:
                        continue
                    low = vb if dpkg_newer(va, vb) else va
                    if all(any(c.package == pkg and c.version == low for c in pools[h]) for h in (a, b)) \
                            and (pins[a].get(pkg), pins[b].get(pkg)) != (low, low):
                        pins[a][pkg] = pins[b][pkg] = low
                        _debug(f"align {pkg} {va} {vb} -> {low}")
                        changed = True
        if not changed:
            break
    else:
        raise LockError("make lock did not settle on a package set in 30 rounds.")
    out = {}
    for host, (arch, _, _) in hosts.items():
        base_set = set(resolve(arch, view(host), wanted[host][0], pins[host]))
        entries = [Entry("base" if p in base_set else "image", c.package, c.version, c.arch, c.size, c.sha256,
                         c.served_path, c.suite, c.date, c.evidence)  # type: ignore[arg-type]
                   for p, c in chosen[host].items()]
        out[host] = Lock(host, arch, entries, releases[host])
    return out


def _stanza_of(e: Entry) -> str:
    """A recorded entry's control stanza, from its .deb (downloaded and checked against the lock)."""
    return control(fetch(e)).rstrip("\n")


def diff(old: Lock | None, new: Lock) -> list[str]:
    before = {(e.package, e.arch): e for e in (old.entries if old else [])}
    after = {(e.package, e.arch): e for e in new.entries}
    lines = []
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a == b:
            continue
        if a is None:
            lines.append(f"{new.host}: + {b.package} {b.version} ({b.layer}, {b.evidence})")
        elif b is None:
            lines.append(f"{new.host}: - {a.package} {a.version}")
        elif a.version != b.version:
            lines.append(f"{new.host}: {b.package} {a.version} -> {b.version} ({b.evidence})")
        else:
            changed = [f"{c} {getattr(a, c)} -> {getattr(b, c)}" for c in COLUMNS if getattr(a, c) != getattr(b, c)]
            lines.append(f"{new.host}: {b.package} {b.version}: " + "; ".join(changed))
    return lines


def host_plan(host: str) -> tuple[str, list[str], list[str]]:
    from checks.hosts import engine as eng

    spec = eng.HOSTS[host]
    return spec.arch, [], containerfile_packages(spec.arch)


def containerfile_packages(arch: str, containerfile: Path | None = None) -> list[str]:
    """Every package the check host's Containerfile installs on arch (its steps gated by ``[ "$ARCH" = X ]``)."""
    from checks.hosts import engine as eng

    text = (containerfile or eng.CONTAINERFILE).read_text(encoding="utf-8").replace("\\\n", " ")
    names: list[str] = []
    for step in re.split(r"^RUN ", text, flags=re.M)[1:]:
        gate = re.search(r'\[ "\$ARCH" = (\w+) \] \|\| exit 0', step)
        if gate and gate.group(1) != arch:
            continue
        for m in re.finditer(r"apt-get install -y --no-install-recommends ([^;]+);", step):
            for word in m.group(1).split():
                names += eng.host_packages(arch) if word == "$pkgs" else [word]
    return list(dict.fromkeys(names))


def first_seen(host: str, specs: list[str]) -> list[str]:
    """Add PACKAGE=VERSION entries the mirror serves but no index names (the pool path of the package's
    current index entry with the version replaced); each .deb's own control must say that package, version
    and architecture. Their evidence is ``first-seen`` with today's date."""
    from checks.hosts import engine as eng

    try:
        lock = read(host)
    except LockError:
        lock = Lock(host, eng.HOSTS[host].arch, [])
    arch = lock.arch
    cands, _ = read_sources(arch)
    added = []
    for spec in specs:
        pkg, _, version = spec.partition("=")
        ref = next((c for c in cands if c.package == pkg), None)
        if ref is None or not version:
            raise LockError(f"{spec}: give PACKAGE=VERSION for a package the {arch} indices name.")
        old_file = ref.paths[0].rsplit("/", 1)
        name = f"{pkg}_{version.split(':')[-1]}_{ref.arch}.deb"
        path = f"{old_file[0]}/{name}"
        target = url(path)
        try:
            data = mir.fetch(target, timeout=600)
        except urllib.error.HTTPError as exc:
            raise LockError(f"{target}: HTTP {exc.code}; the mirror does not serve {pkg} {version}.") from None
        with tempfile.NamedTemporaryFile(suffix=".deb") as tmp:
            tmp.write(data)
            tmp.flush()
            fields = dict(re.findall(r"^(Package|Version|Architecture): (.+)$", control(Path(tmp.name)), re.M))
            Path(tmp.name).with_suffix(".control").unlink(missing_ok=True)
        if fields != {"Package": pkg, "Version": version, "Architecture": ref.arch}:
            raise LockError(f"{target} is not {pkg} {version} ({ref.arch}): its control says {fields}.")
        entry = Entry("image", pkg, version, ref.arch, len(data), hashlib.sha256(data).hexdigest(), path,
                      "none", datetime.date.today().isoformat(), "first-seen")
        lock.entries = [e for e in lock.entries if not (e.package == pkg and e.arch == ref.arch)] + [entry]
        added.append(f"{host}: + {pkg} {version} (first-seen, sha256 {entry.sha256[:16]}...)")
    lock.path.write_text(lock.text(), encoding="utf-8")
    return added


def all_hosts() -> list[str]:
    from checks.hosts import engine as eng

    return list(eng.HOSTS)


def selected_hosts() -> list[str]:
    wanted = [h for h in re.split(r"[,\s]+", os.environ.get("ZR_HOSTS", "")) if h]
    return wanted or all_hosts()


def main(argv: list[str]) -> int:
    cmd, *rest = argv or ["help"]
    try:
        if cmd == "probe":
            engine = None
            if shutil.which("docker") or shutil.which("podman"):
                from checks.hosts import engine as eng

                with contextlib.suppress(eng.PrerequisiteError):
                    engine = eng.Engine.detect()
            print(probe(rest or selected_hosts(), engine))
        elif cmd == "record":
            hosts = rest or all_hosts()
            old = {}
            for h in hosts:
                with contextlib.suppress(LockError):
                    old[h] = read(h)
            new = record({h: host_plan(h) for h in hosts}, old)
            LOCKS.mkdir(exist_ok=True)
            changes = []
            for h, lock in new.items():
                lock.path.write_text(lock.text(), encoding="utf-8")
                changes += diff(old.get(h), lock)
            print("\n".join(changes) if changes else "make lock: nothing changed")
            print(summary(new.values()))
        elif cmd == "first-seen" and len(rest) >= 2:
            print("\n".join(first_seen(rest[0], rest[1:])))
        else:
            print("usage: python -m checks.hosts.lock probe [HOST...] | record [HOST...] "
                  "| first-seen HOST PKG=VERSION...", file=sys.stderr)
            return 2
    except (LockError, mir.MirrorError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def summary(locks: Iterable[Lock]) -> str:
    locks = list(locks)
    lines = []
    for lock in locks:
        counts = {ev: sum(e.evidence == ev for e in lock.entries) for ev in EVIDENCE}
        lines.append(f"{lock.host}: {len(lock.layer('base'))} base + {len(lock.layer('image'))} image packages; "
                     + ", ".join(f"{n} {ev}" for ev, n in counts.items() if n))
    if len(locks) > 1:
        a, b = locks[0], locks[1]
        va = {e.package: e.version for e in a.entries}
        differ = sorted(p for p in va if any(e.package == p and e.version != va[p] for e in b.entries))
        lines.append(f"versions that differ between {a.host} and {b.host}: " + (", ".join(differ) or "none"))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
