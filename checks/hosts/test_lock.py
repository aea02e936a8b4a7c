"""The package locks (checks/hosts/lock.py): recorded from what the mirror serves, probed before the tests,
built from exactly the locked bytes.

The mirror stand-in is checks/hosts/fake_mirror.py: suites signed with a throw-away key, real .debs made
with dpkg-deb, and a pool that can lag its index (a file the index names is a 404), as the real s390x pool
did. apt is the machine's own.
"""

from __future__ import annotations

import hashlib
import re
import subprocess

import pytest

from checks.hosts import engine as eng
from checks.hosts import fake_mirror
from checks.hosts import lock as lk
from zrunbook import facts

HOSTS = tuple(eng.HOSTS)


def _mirror(tmp_path, trixie, security=()):
    """A fake mirror: trixie and trixie-security for amd64, each [(name, version, served)]; served."""
    root = tmp_path / "mirror"
    keyring = fake_mirror.make_key(root / "gnupg", "mirror")
    fake_mirror.build_suite(root, root / "gnupg", "debian", "trixie", "amd64", list(trixie))
    fake_mirror.build_suite(root, root / "gnupg", "debian-security", "trixie-security", "amd64", list(security),
                            pool="pool/updates/main")
    return root, keyring


@pytest.fixture
def served_mirror(monkeypatch, tmp_path):
    """Serve a fake mirror made by the returned function; the machine's settings point at it."""
    stack = []

    def serve(trixie, security=()):
        root, keyring = _mirror(tmp_path, trixie, security)
        mirror = fake_mirror.FakeMirror(root, keyring, keyring)
        ctx = fake_mirror.serve(mirror)
        served = ctx.__enter__()
        stack.append(ctx)
        monkeypatch.setenv("ZR_DEBIAN_MIRROR", served.url)
        monkeypatch.setenv("ZR_WORKDIR", str(tmp_path / "work"))
        monkeypatch.delenv("ZR_DEBIAN_SECURITY_MIRROR", raising=False)
        return served

    yield serve
    for ctx in stack:
        ctx.__exit__(None, None, None)


SOURCES = {"amd64": (("debian", "trixie", None), ("debian-security", "trixie-security", None))}
PLAN = {"debian13-amd64": ("amd64", ["zr-probe"], ["zr-probe"])}


def _record(fake, old=None):
    locks = lk.record(PLAN, {"debian13-amd64": old} if old else None, sources=SOURCES, keyring=fake.keyring)
    (entry,) = locks["debian13-amd64"].entries
    return entry


def test_make_lock_takes_the_newest_version_the_index_names_and_the_mirror_serves(served_mirror):
    fake = served_mirror([("zr-probe", "2.0", True)], [("zr-probe", "1.5", True)])
    entry = _record(fake)
    assert (entry.version, entry.evidence, entry.suite) == ("2.0", "signed", "trixie")
    assert entry.path == "debian/pool/main/z/zr-probe/zr-probe_2.0_amd64.deb"


def test_make_lock_passes_over_a_version_the_pool_does_not_serve(served_mirror):
    """The real fault: trixie's index names 2.0, its pool answers 404; the security suite serves 1.5."""
    fake = served_mirror([("zr-probe", "2.0", False)], [("zr-probe", "1.5", True)])
    entry = _record(fake)
    assert (entry.version, entry.suite, entry.evidence) == ("1.5", "trixie-security", "signed")
    assert entry.path.startswith("debian-security/pool/updates/main/")
    served = (fake.root / "debian-security/pool/updates/main/z/zr-probe/zr-probe_1.5_amd64.deb").read_bytes()
    assert entry.sha256 == hashlib.sha256(served).hexdigest()


def test_make_lock_keeps_the_locked_version_when_nothing_newer_is_served(served_mirror, tmp_path):
    fake = served_mirror([("zr-probe", "2.0", False), ])
    old_deb = fake_mirror.make_package(fake.root, "debian", "zr-probe", "1.0", "amd64")
    data = old_deb.read_bytes()
    old = lk.Lock("debian13-amd64", "amd64", [lk.Entry(
        "base", "zr-probe", "1.0", "amd64", len(data), hashlib.sha256(data).hexdigest(),
        "debian/pool/main/z/zr-probe/zr-probe_1.0_amd64.deb", "none", "2026-11-27", "first-seen")])
    entry = _record(fake, old)
    assert (entry.version, entry.evidence) == ("1.0", "first-seen")
    assert lk.diff(old, lk.Lock("debian13-amd64", "amd64", [entry])) == []


def test_make_lock_without_any_served_version_says_which_and_how_to_record_one(served_mirror):
    fake = served_mirror([("zr-probe", "2.0", False)])
    with pytest.raises(lk.LockError) as err:
        _record(fake)
    assert "zr-probe 2.0" in str(err.value)
    assert "first-seen" in str(err.value)


def _lock_of(fake, tmp_path, monkeypatch, versions):
    """A lock file for debian13-amd64 with zr-probe at each version (the .deb's real hash)."""
    entries = []
    for v in versions:
        deb = fake.root / f"debian/pool/main/z/zr-probe/zr-probe_{v}_amd64.deb"
        data = deb.read_bytes() if deb.exists() else b"gone"
        entries.append(lk.Entry("image", f"zr-probe{'' if v == versions[0] else '-' + v}", v, "amd64", len(data),
                                hashlib.sha256(data).hexdigest(), f"debian/pool/main/z/zr-probe/zr-probe_{v}_amd64.deb",
                                "trixie", "2026-11-21", "signed"))
    lock = lk.Lock("debian13-amd64", "amd64", entries, ["debian trixie amd64 2026-11-21 signed"])
    folder = tmp_path / "locks"
    folder.mkdir(exist_ok=True)
    (folder / "debian13-amd64.tsv").write_text(lock.text())
    monkeypatch.setattr(lk, "LOCKS", folder)
    return lock


def test_the_probe_passes_when_every_locked_file_is_served(served_mirror, tmp_path, monkeypatch):
    fake = served_mirror([("zr-probe", "2.0", True), ("zr-probe", "1.0", True)])
    _lock_of(fake, tmp_path, monkeypatch, ["2.0"])
    assert lk.probe(["debian13-amd64"]).startswith("lock probe: every locked package is served")


@pytest.mark.negative(invariant="every file of the package lock is still served",
                      expects="the probe stops with one sentence: no longer serves the file, HTTP 404, run `make lock`")
def test_the_probe_stops_with_one_sentence_naming_a_locked_file_that_is_a_404(served_mirror, tmp_path, monkeypatch):
    fake = served_mirror([("zr-probe", "2.0", True), ("zr-probe", "1.0", True)])
    _lock_of(fake, tmp_path, monkeypatch, ["2.0", "1.0"])
    (fake.root / "debian/pool/main/z/zr-probe/zr-probe_1.0_amd64.deb").unlink()
    with pytest.raises(lk.LockError) as err:
        lk.probe(["debian13-amd64"])
    message = str(err.value)
    assert "\n" not in message
    assert "no longer serves zr-probe-1.0 1.0 (amd64)" in message
    assert "HTTP 404" in message
    assert "run `make lock`" in message


def test_the_probe_command_exits_before_any_test_with_that_sentence(tmp_path):
    """What make check runs first: python -m checks.hosts.lock probe, exit 1 and one line on stderr."""
    locks = tmp_path / "locks"
    locks.mkdir()
    bad = lk.Lock("debian13-amd64", "amd64", [lk.Entry(
        "base", "zr-gone", "1.0", "amd64", 4, "0" * 64, "debian/pool/main/z/zr-gone/zr-gone_1.0_amd64.deb",
        "trixie", "2026-11-21", "signed")])
    (locks / "debian13-amd64.tsv").write_text(bad.text())
    with fake_mirror.serve(fake_mirror.FakeMirror(tmp_path, tmp_path, tmp_path)) as fake:
        code = (f"import sys; from checks.hosts import lock as lk; from pathlib import Path; "
                f"lk.LOCKS = Path({str(locks)!r}); sys.exit(lk.main(['probe', 'debian13-amd64']))")
        proc = subprocess.run(["python3", "-c", code], cwd=eng.REPO, capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "ZR_DEBIAN_MIRROR": fake.url, "ZR_ENGINE": "none"})
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "no longer serves zr-gone 1.0 (amd64)" in proc.stderr


@pytest.mark.negative(invariant="a deb is used only if its sha256 is the lock's",
                      expects="the deb is refused (was not used) and not kept in the cache")
def test_a_deb_whose_sha256_differs_from_the_lock_is_refused_and_not_kept(served_mirror, tmp_path, monkeypatch):
    fake = served_mirror([("zr-probe", "2.0", True)])
    lock = _lock_of(fake, tmp_path, monkeypatch, ["2.0"])
    good = lock.entries[0]
    cache = tmp_path / "cache"
    cache.mkdir()
    forged = lk.Entry(**{**good.__dict__, "sha256": "f" * 64})
    with pytest.raises(lk.LockError) as err:
        lk.fetch(forged, cache)
    assert "the lock records ffffffffffffffff..." in str(err.value)
    assert "was not used" in str(err.value)
    assert list(cache.iterdir()) == []
    assert lk.fetch(good, cache).read_bytes() == (fake.root / "debian" / good.path.split("/", 1)[1]).read_bytes()


def test_the_build_repository_serves_the_locked_files_to_apt_and_nothing_else(served_mirror, tmp_path, monkeypatch):
    """apt (the machine's own) downloads the locked zr-probe through the LockRepo; 2.0 is on the mirror but
    not in the lock, so apt cannot have it."""
    fake = served_mirror([("zr-probe", "2.0", True), ("zr-probe", "1.0", True)])
    lock = _lock_of(fake, tmp_path, monkeypatch, ["1.0"])
    with lk.build_repo(lock, "image") as repo:
        env = fake_mirror.apt_root(tmp_path / "apt", lk.BUILD_MIRROR, "amd64", keyring=fake.keyring, trusted=True,
                                   proxy=repo.url)
        update = subprocess.run(["apt-get", "-q", "update"], env=env, capture_output=True, text=True, timeout=120)
        out = tmp_path / "out"
        out.mkdir()
        got = subprocess.run(["apt-get", "-q", "download", "zr-probe"], env=env, cwd=out, capture_output=True,
                             text=True, timeout=120)
        other = subprocess.run(["apt-get", "-q", "download", "zr-probe=2.0"], env=env, cwd=out, capture_output=True,
                               text=True, timeout=120)
    assert update.returncode == 0, update.stderr
    assert got.returncode == 0, got.stderr
    assert other.returncode != 0
    (deb,) = out.glob("*.deb")
    assert hashlib.sha256(deb.read_bytes()).hexdigest() == lock.entries[0].sha256
    assert not any("InRelease" not in r and "/dists/" not in r and "/pool/locked/" not in r for r in repo.requests)


# --- the committed locks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("host", HOSTS)
def test_the_committed_lock_holds_every_package_the_containerfile_installs(host):
    lock = lk.read(host)
    names = {e.package for e in lock.entries}
    missing = set(lk.containerfile_packages(eng.HOSTS[host].arch)) - names
    assert not missing, f"run make lock: {host}'s lock lacks {sorted(missing)}"
    assert "apt" in {e.package for e in lock.layer("base")}
    assert all(e.arch in (eng.HOSTS[host].arch, "all") for e in lock.entries)
    assert lock.releases, "the lock names the Releases it was taken from"


@pytest.mark.parametrize("host", HOSTS)
def test_every_weak_lock_entry_is_labelled_in_the_image_provenance(host):
    lock = lk.read(host)
    weak = {e.package for e in lock.entries if e.evidence != "signed"}
    provenance = lock.provenance()
    assert (provenance == "verified") == (not weak)
    for evidence in ("unverified-index", "first-seen"):
        count = len({e.package for e in lock.entries if e.evidence == evidence})
        if count:
            assert f"{count} packages" in provenance


def _upstream(version: str) -> str:
    return re.sub(r"^\d+:", "", version).split("-")[0].split("+")[0]


def _versions(package):
    return {h: next(e.version for e in lk.read(h).entries if e.package == package) for h in HOSTS}


def test_the_openssl_row_names_the_locked_openssl_of_both_hosts():
    row = next(r for r in facts.table("crypto/openssl-versions") if r["distribution"] == "Debian 13 (trixie)")
    versions = {_upstream(v) for v in _versions("openssl").values()}
    named = set(re.findall(r"\b3\.5\.\d+\b", row["OpenSSL"]))
    assert named == versions, f"the row names {named}, the locks hold {versions}"


def test_the_patched_levels_table_holds_for_the_locked_opencryptoki_and_pkcs11_provider():
    rows = facts.table("crypto/fixed-versions")
    fixes = [r["fixed version"] for r in rows if r["component"] == "opencryptoki"
             and r["distribution"] == "Debian 13 (trixie)"
             and r["fixed version"] not in ("none", "not affected", "not confirmed")]
    assert fixes
    for host, version in _versions("opencryptoki").items():
        for fix in fixes:
            newer = subprocess.run(["dpkg", "--compare-versions", version, "ge", fix]).returncode == 0
            assert newer, f"{host}'s locked opencryptoki {version} is older than the table's fix {fix}"
    provider = next(r for r in rows
                    if r["component"] == "pkcs11-provider" and r["distribution"].startswith("Debian 13"))
    for version in _versions("pkcs11-provider").values():
        assert f"ships {_upstream(version)}" in provider["advisory"]


def test_the_sid_packages_row_names_the_locked_openssl_ibmca_and_libica4():
    lock = {e.package: e for e in lk.read("debian13-s390x").entries}
    row = next(r for r in facts.table("crypto/distro-packages") if r["distribution"] == "Debian sid")
    assert row["version"] == _upstream(lock["openssl-ibmca"].version)
    assert f"libica4 {_upstream(lock['libica4'].version)}" in row["package"]
    assert lock["openssl-ibmca"].suite == "sid"


def test_both_hosts_run_the_same_token_stack():
    """The fact the where page may state: the same openCryptoki, pkcs11-provider and OpenSSL on both hosts."""
    for package in ("opencryptoki", "libopencryptoki0", "pkcs11-provider", "openssl", "libssl3t64", "opensc"):
        versions = _versions(package)
        assert len(set(versions.values())) == 1, f"{package}: {versions}"


def test_make_check_runs_the_probe_before_pytest():
    """CI runs make check: the probe must come first, so a cold path that broke stops every run, warm or not."""
    steps = subprocess.run(["make", "-n", "check"], cwd=eng.REPO, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "ZR_HOSTS": ""}).stdout.splitlines()
    probe = next(i for i, s in enumerate(steps) if "-m checks.hosts.lock probe" in s)
    tox = next(i for i, s in enumerate(steps) if " -e check" in s)
    assert probe < tox
