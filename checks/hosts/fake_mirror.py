"""A small Debian mirror on 127.0.0.1 for the index-fallback tests: signed Release, real .debs, one bad index.

It reproduces the fault seen on the real mirror (checks/hosts/mirror.py): ``trixie``'s
``main/binary-s390x/Packages.xz`` is not the file the signed Release lists (the served index is smaller,
as there), while ``main/binary-amd64`` verifies. The Release is clear-signed with a throw-away GnuPG key
made for the test; a second key plays a forger. Each architecture's index names one real package,
``zr-probe``, built with dpkg-deb. Every request is counted by path, so a test can tell how often a
client asked for a file.
"""

from __future__ import annotations

import collections
import hashlib
import http.server
import lzma
import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

SUITE = "trixie"


def _gpg(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["gpg", "--homedir", str(home), "--batch", "--quiet", "--pinentry-mode", "loopback",
                           "--passphrase", "", *args], check=True, capture_output=True, **kw)


def make_key(home: Path, name: str) -> Path:
    """A new signing key in its own GnuPG home; returns the public keyring file (for gpgv/apt)."""
    home.mkdir(mode=0o700, parents=True)
    _gpg(home, "--quick-gen-key", f"{name} <{name}@zrunbook.invalid>", "ed25519", "sign", "never")
    keyring = home.parent / f"{name}.gpg"
    keyring.write_bytes(_gpg(home, "--export").stdout)
    return keyring


def make_deb(root: Path, arch: str, payload: str) -> Path:
    pkg = root / f"build-{arch}"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        f"Package: zr-probe\nVersion: 1.0\nArchitecture: {arch}\nMaintainer: zrunbook <t@zrunbook.invalid>\n"
        "Description: index fallback probe\n")
    (pkg / "usr/share/zr-probe").mkdir(parents=True)
    (pkg / "usr/share/zr-probe/payload").write_text(payload)
    deb = root / "debian/pool/main/z/zr-probe" / f"zr-probe_1.0_{arch}.deb"
    deb.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(pkg), str(deb)],
                   check=True, capture_output=True)
    return deb


def stanza(deb: Path, arch: str, root: Path) -> str:
    data = deb.read_bytes()
    return (f"Package: zr-probe\nVersion: 1.0\nArchitecture: {arch}\nMaintainer: zrunbook <t@zrunbook.invalid>\n"
            f"Filename: {deb.relative_to(root / 'debian').as_posix()}\nSize: {len(data)}\n"
            f"SHA256: {hashlib.sha256(data).hexdigest()}\nDescription: index fallback probe\n")


@dataclass
class FakeMirror:
    root: Path
    keyring: Path  # the mirror's signing key (what apt's Signed-By and gpgv trust)
    forger_keyring: Path
    requests: collections.Counter = field(default_factory=collections.Counter)
    url: str = ""

    def count(self, suffix: str) -> int:
        return sum(n for path, n in self.requests.items() if path.endswith(suffix))


def build(root: Path, *, consistent_s390x: bool = False) -> FakeMirror:
    """Write the mirror's files under root/debian; sign the Release with a fresh key."""
    key = make_key(root / "gnupg-mirror", "mirror")
    forger = make_key(root / "gnupg-forger", "forger")
    dists = root / "debian/dists" / SUITE
    release_files: dict[str, bytes] = {}
    for arch in ("amd64", "s390x"):
        deb = make_deb(root, arch, f"zr-probe for {arch}\n")
        served = stanza(deb, arch, root).encode()
        signed = served
        if arch == "s390x" and not consistent_s390x:
            # the signed Release describes a larger index than the one served (as on the real mirror)
            signed = served + b"\n" + stanza(deb, arch, root).replace("zr-probe", "zr-gone").encode()
        folder = dists / "main" / f"binary-{arch}"
        folder.mkdir(parents=True)
        (folder / "Packages.xz").write_bytes(lzma.compress(served))
        release_files[f"main/binary-{arch}/Packages"] = signed
        release_files[f"main/binary-{arch}/Packages.xz"] = (
            lzma.compress(signed) if signed != served else (folder / "Packages.xz").read_bytes())
    lines = [f"Origin: zrunbook\nLabel: zrunbook\nSuite: stable\nCodename: {SUITE}\nAcquire-By-Hash: yes",
             "No-Support-for-Architecture-all: Packages\nArchitectures: amd64 s390x\nComponents: main"]
    for name, algo in (("MD5Sum", hashlib.md5), ("SHA256", hashlib.sha256)):
        lines.append(f"{name}:")
        lines += [f" {algo(data).hexdigest()} {len(data):>10} {path}" for path, data in sorted(release_files.items())]
    release = dists / "Release"
    release.write_text("\n".join(lines) + "\n")
    for name, home in (("InRelease", root / "gnupg-mirror"), ("InRelease.forged", root / "gnupg-forger")):
        _gpg(home, "--clearsign", "--output", str(dists / name), str(release))
    _gpg(root / "gnupg-mirror", "--detach-sign", "--output", str(dists / "Release.gpg"), str(release))
    for home in ("gnupg-mirror", "gnupg-forger"):
        subprocess.run(["gpgconf", "--homedir", str(root / home), "--kill", "all"], capture_output=True)
    return FakeMirror(root, key, forger)


class serve:  # noqa: N801 (used as a context manager, like open)
    """Serve mirror.root on 127.0.0.1; ``url`` is the mirror's base (…/debian)."""

    def __init__(self, mirror: FakeMirror):
        self.mirror = mirror
        counter = mirror.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **kw):
                super().__init__(*a, directory=str(mirror.root), **kw)

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                counter[self.path] += 1
                super().do_GET()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeMirror:
        self.thread.start()
        self.mirror.url = f"http://127.0.0.1:{self.server.server_address[1]}/debian"
        return self.mirror

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def apt_root(base: Path, mirror_url: str, arch: str, *, keyring: Path, trusted: bool = False,
             proxy: str | None = None) -> dict[str, str]:
    """A private apt (its own lists, cache and status file; the machine's apt is not touched) pointed at
    the fake mirror; returns the environment that makes apt-get use it (APT_CONFIG)."""
    for sub in ("etc/apt/sources.list.d", "etc/apt/apt.conf.d", "etc/apt/preferences.d",
                "var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/lib/dpkg"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    (base / "var/lib/dpkg/status").touch()
    (base / "etc/apt/sources.list.d/fake.sources").write_text(
        f"Types: deb\nURIs: {mirror_url}\nSuites: {SUITE}\nComponents: main\n"
        + ("Trusted: yes\n" if trusted else "") + f"Signed-By: {keyring}\n")
    conf = [f'Dir "{base}/";', 'Dir::State::status "var/lib/dpkg/status";', 'Dir::Etc::sourcelist "/dev/null";',
            f'APT::Architecture "{arch}";', f'APT::Architectures {{ "{arch}"; }};', 'Acquire::Languages "none";',
            'Acquire::Retries "0";', 'Debug::NoLocking "true";', 'APT::Sandbox::User "root";',
            'Dir::Etc::trusted "/dev/null";', f'Dir::Etc::trustedparts "{base}/etc/apt/trusted.gpg.d";']
    if proxy:
        conf.append(f'Acquire::http::Proxy "{proxy}";')
    (base / "etc/apt/trusted.gpg.d").mkdir(exist_ok=True)
    (base / "apt.conf").write_text("\n".join(conf) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    return dict(env, APT_CONFIG=str(base / "apt.conf"), LC_ALL="C")


def make_package(root: Path, archive: str, name: str, version: str, arch: str, pool: str = "pool/main") -> Path:
    """A real .deb of name/version for arch under root/archive/pool (a payload that differs per version)."""
    pkg = root / f"build-{archive}-{name}-{version}-{arch}"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\nMaintainer: zrunbook <t@zrunbook.invalid>\n"
        "Priority: optional\nDescription: lock test package\n")
    (pkg / f"usr/share/{name}").mkdir(parents=True)
    (pkg / f"usr/share/{name}/payload").write_text(f"{name} {version} {arch}\n")
    deb = root / archive / pool / name[0] / name / f"{name}_{version}_{arch}.deb"
    deb.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(pkg), str(deb)],
                   check=True, capture_output=True)
    return deb


def build_suite(root: Path, key_home: Path, archive: str, suite: str, arch: str,
                packages: list[tuple[str, str, bool]], pool: str = "pool/main") -> None:
    """A signed suite (InRelease by key_home's key) of archive whose index names packages (name, version,
    served): an unserved package's .deb is made, indexed, then removed, as on a pool that lags its index."""
    stanzas = []
    for name, version, is_served in packages:
        deb = make_package(root, archive, name, version, arch, pool)
        data = deb.read_bytes()
        stanzas.append(f"Package: {name}\nVersion: {version}\nArchitecture: {arch}\nPriority: optional\n"
                       f"Maintainer: zrunbook <t@zrunbook.invalid>\nFilename: {deb.relative_to(root / archive)}\n"
                       f"Size: {len(data)}\nSHA256: {hashlib.sha256(data).hexdigest()}\n"
                       "Description: lock test package\n")
        if not is_served:
            deb.unlink()
    index = "\n".join(stanzas).encode()
    dists = root / archive / "dists" / suite
    folder = dists / "main" / f"binary-{arch}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Packages.xz").write_bytes(lzma.compress(index))
    files = {f"main/binary-{arch}/Packages": index,
             f"main/binary-{arch}/Packages.xz": (folder / "Packages.xz").read_bytes()}
    lines = [f"Origin: zrunbook\nSuite: {suite}\nCodename: {suite}\nDate: Sat, 21 Nov 2026 09:15:44 UTC",
             f"No-Support-for-Architecture-all: Packages\nArchitectures: {arch}\nComponents: main", "SHA256:"]
    lines += [f" {hashlib.sha256(d).hexdigest()} {len(d):>10} {p}" for p, d in sorted(files.items())]
    (dists / "Release").write_text("\n".join(lines) + "\n")
    _gpg(key_home, "--yes", "--clearsign", "--output", str(dists / "InRelease"), str(dists / "Release"))
    subprocess.run(["gpgconf", "--homedir", str(key_home), "--kill", "all"], capture_output=True)
