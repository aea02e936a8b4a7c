"""Scratch builds of pkcs11-provider for make bench WHAT=token-settings (issue 46, item 3): what a change to the
provider's code would give, measured beside Debian's library without shipping a patched one.

Three builds from upstream's git tags, with Debian's compiler flags (checks/ihs/upstream/build-pkcs11-provider.sh,
in a throwaway container of the bench host's image, its tools from Debian's mirror):

- ``1.0``: the version Debian 13 ships, unchanged: the control, so that a difference between Debian's library and
  a scratch build is not taken for the patch's effect;
- ``1.0+fork-reset``: 1.0 with checks/ihs/upstream/fork-reset.patch (one line: the session pool's open-session
  count reset with its handles after fork);
- ``1.2.0``: upstream's release that removed the counter (commit 83e2388), as released.

The source is a clone of upstream's repository that the person running the bench names in ZR_PKCS11_PROVIDER_GIT
(no package registry here serves pkcs11-provider's source, and Debian's pool lacks 1.0-3's source package). The
libraries are kept in build/pkcs11-provider/<key>/ (the key hashes the tags' commits, the patch, the script and the
image), and copied into the bench host at /opt/pkcs11-provider/<name>/pkcs11.so; the setting's OpenSSL
configuration names that file with ``module =``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

from checks.hosts.util import ok
from zrunbook import BUILD
from zrunbook.results import token_settings

SOURCE_ENV = "ZR_PKCS11_PROVIDER_GIT"
HERE = Path(__file__).resolve().parent / "upstream"
SCRIPT = HERE / "build-pkcs11-provider.sh"
PATCHES = {"fork-reset": HERE / "fork-reset.patch"}
BUILDS = {"1.0": "v1.0", "1.0+fork-reset": "v1.0", "1.2.0": "v1.2.0"}  # name -> upstream's tag
IN_HOST = token_settings.SCRATCH_MODULE
assert set(BUILDS) == set(token_settings.SCRATCH.values()), "a setting names a build p11prov_builds does not make"


def source() -> Path:
    """The clone of upstream's repository, checked for the tags the builds need."""
    where = os.environ.get(SOURCE_ENV, "")
    hint = (f"set {SOURCE_ENV} to a clone of pkcs11-provider's repository (git clone "
            "https://github.com/latchset/pkcs11-provider) that has the tags " + ", ".join(sorted(set(BUILDS.values()))))
    if not where:
        raise AssertionError(f"The scratch builds need pkcs11-provider's source: {hint}.")
    for tag in set(BUILDS.values()):
        r = subprocess.run(["git", "-C", where, "rev-parse", "--verify", "-q", f"{tag}^{{commit}}"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"{where} has no tag {tag}: {hint}.")
    return Path(where)


def _commit(src: Path, tag: str) -> str:
    return subprocess.run(["git", "-C", str(src), "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True,
                          check=True).stdout.strip()


def build(cli: str, image: str) -> dict[str, Path]:
    """Every build's pkcs11.so, built once per source, patch, script and image."""
    src = source()
    h = hashlib.sha256(image.encode())
    for name, tag in sorted(BUILDS.items()):
        h.update(f"{name} {_commit(src, tag)}\n".encode())
    for path in (SCRIPT, *PATCHES.values()):
        h.update(path.read_bytes())
    out = BUILD / "pkcs11-provider" / h.hexdigest()[:16]
    libs = {name: out / name / "pkcs11.so" for name in BUILDS}
    if all(p.is_file() for p in libs.values()):
        return libs
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, tag in BUILDS.items():
            with open(Path(tmp) / f"{name}.tar", "wb") as f:
                subprocess.run(["git", "-C", str(src), "archive", tag], stdout=f, check=True)
        for stem, patch in PATCHES.items():
            (Path(tmp) / f"{stem}.patch").write_bytes(patch.read_bytes())
        r = subprocess.run([cli, "run", "--rm", "-v", f"{tmp}:/src:ro", "-v", f"{out}:/out",
                            "-v", f"{SCRIPT}:/build.sh:ro", image, "bash", "/build.sh"],
                           capture_output=True, text=True)
    if r.returncode != 0 or not all(p.is_file() for p in libs.values()):
        raise AssertionError(f"the scratch build of pkcs11-provider failed (exit {r.returncode}):\n"
                             f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
    print(r.stdout.strip())
    return libs


def install(host, cli: str) -> dict[str, str]:
    """The builds copied into the bench host; returns name -> the path a ``module =`` line names."""
    image = subprocess.run([cli, "inspect", "-f", "{{.Config.Image}}", host.zr_container], capture_output=True,
                           text=True, check=True).stdout.strip()
    paths = {}
    for name, lib in build(cli, image).items():
        path = IN_HOST.format(name=name)
        ok(host, f"mkdir -p {Path(path).parent}")
        subprocess.run([cli, "cp", str(lib), f"{host.zr_container}:{path}"], check=True)
        paths[name] = path
    return paths
