"""The index fallback (checks/hosts/mirror.py) against a fake mirror on 127.0.0.1, with the real apt.

The fake mirror (checks/hosts/fake_mirror.py) signs its Release with a throw-away key and serves an
s390x index that does not match it, as the real mirror did; amd64 verifies. apt-get here is the
machine's own, with a private state folder: what it accepts or refuses is apt's verdict, not ours.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from checks.hosts import engine as eng
from checks.hosts import fake_mirror
from checks.hosts import mirror as mir
from zrunbook import ledger


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    mirror = fake_mirror.build(tmp_path_factory.mktemp("fake-mirror"))
    with fake_mirror.serve(mirror) as served:
        yield served


def apt(env, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(["apt-get", "-q", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def apt_download(tmp_path, fake, arch, *, trusted=False, proxy=None):
    """apt-get update, then download zr-probe; returns (update, download, the downloaded .deb or None)."""
    env = fake_mirror.apt_root(tmp_path / "apt", fake.url, arch, keyring=fake.keyring, trusted=trusted, proxy=proxy)
    update = apt(env, "update")
    out = tmp_path / "out"
    out.mkdir()
    download = apt(env, "download", "zr-probe", cwd=out)
    debs = list(out.glob("*.deb"))
    return update, download, debs[0] if debs else None


def test_an_index_that_matches_the_signed_release_verifies(fake):
    check = mir.check_suite(fake.url, "trixie", "amd64", fake.keyring)
    assert check.verified
    assert list(check.good) == ["main/binary-amd64/Packages.xz"]


def test_an_index_that_differs_from_the_signed_release_is_a_mismatch_naming_both_sizes(fake):
    check = mir.check_suite(fake.url, "trixie", "s390x", fake.keyring)
    assert [m.path for m in check.mismatches] == ["main/binary-s390x/Packages.xz"]
    served, signed = len(check.mismatches[0].served), check.mismatches[0].signed.size
    assert served < signed
    assert f"served {served:,} bytes" in check.mismatches[0].describe()
    assert f"lists {signed:,} bytes" in check.mismatches[0].describe()


@pytest.mark.negative(invariant="the Debian mirror's releases verify against the pinned keyring",
                      expects="a release signed by another key does not verify")
def test_a_release_signed_by_another_key_is_refused_whatever_the_fallback_says(fake, tmp_path):
    forged = (fake.root / "debian/dists/trixie/InRelease.forged").read_bytes()
    with pytest.raises(mir.MirrorError, match="does not verify"):
        mir.verify_inrelease(forged, fake.keyring)
    with pytest.raises(mir.MirrorError, match="does not verify"):
        mir.check_suite(fake.url, "trixie", "amd64", fake.forger_keyring)


def test_the_rewritten_release_changes_only_the_mismatched_index(fake):
    check = mir.check_suite(fake.url, "trixie", "s390x", fake.keyring)
    before = mir.parse_release(check.release)
    after = mir.parse_release(mir.rewrite_release(check.release, check.mismatches))
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == {"main/binary-s390x/Packages.xz", "main/binary-s390x/Packages"}
    served = check.mismatches[0].served
    assert after["main/binary-s390x/Packages.xz"] == mir.Signed(len(served), hashlib.sha256(served).hexdigest())


@pytest.mark.negative(invariant="the fake mirror fails apt as the real one did",
                      expects="apt fails on the mismatched index (Hash Sum mismatch) and no deb is downloaded")
def test_apt_itself_rejects_the_mismatched_index_without_the_fallback(fake, tmp_path):
    """The fault is real: the fake mirror fails apt exactly as the real one did."""
    update, download, deb = apt_download(tmp_path, fake, "s390x")
    assert update.returncode != 0 or "Hash Sum mismatch" in update.stderr + update.stdout
    assert deb is None


def test_apt_installs_from_the_served_index_through_the_fallback_proxy(fake, tmp_path):
    with mir.IndexProxy("s390x", allow=True, keyring=fake.keyring) as proxy:
        update, download, deb = apt_download(tmp_path, fake, "s390x", trusted=True, proxy=proxy.url)
    assert update.returncode == 0, update.stderr
    assert download.returncode == 0, download.stderr
    assert deb is not None
    assert deb.read_bytes() == (fake.root / "debian/pool/main/z/zr-probe/zr-probe_1.0_s390x.deb").read_bytes()
    assert [m.path for m in proxy.served_fallback] == ["main/binary-s390x/Packages.xz"]


@pytest.mark.negative(invariant="the index fallback does not stop apt checking each deb",
                      expects="the download fails (Hash Sum mismatch) and no deb is kept")
def test_apt_still_rejects_a_deb_that_does_not_match_the_served_index(fake, tmp_path):
    deb_path = fake.root / "debian/pool/main/z/zr-probe/zr-probe_1.0_s390x.deb"
    original = deb_path.read_bytes()
    deb_path.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))  # same size, one bit flipped
    try:
        with mir.IndexProxy("s390x", allow=True, keyring=fake.keyring) as proxy:
            update, download, deb = apt_download(tmp_path, fake, "s390x", trusted=True, proxy=proxy.url)
    finally:
        deb_path.write_bytes(original)
    assert update.returncode == 0, update.stderr
    assert download.returncode != 0
    assert "Hash Sum mismatch" in download.stderr or "unexpected" in download.stderr, download.stderr
    assert deb is None


@pytest.mark.negative(invariant="the index fallback is served only when allowed",
                      expects="the proxy refuses the mismatched index, serves no fallback and no deb is downloaded")
def test_the_proxy_refuses_the_mismatched_index_when_the_fallback_is_not_allowed(fake, tmp_path):
    with mir.IndexProxy("s390x", allow=False, keyring=fake.keyring) as proxy:
        update, download, deb = apt_download(tmp_path, fake, "s390x", trusted=True, proxy=proxy.url)
    assert deb is None
    assert proxy.refused
    assert "main/binary-s390x/Packages.xz" in proxy.refused[0]
    assert not proxy.served_fallback


def test_a_verified_suite_passes_through_the_proxy_unchanged_and_apt_checks_its_signature(fake, tmp_path):
    """Never weakened for an index that verifies: the mirror's own InRelease, checked by apt (not Trusted)."""
    with mir.IndexProxy("amd64", allow=True, keyring=fake.keyring) as proxy:
        update, download, deb = apt_download(tmp_path, fake, "amd64", proxy=proxy.url)
    assert update.returncode == 0, update.stderr
    assert deb is not None
    assert not proxy.served_fallback
    lists = tmp_path / "apt/var/lib/apt/lists"
    (stored,) = lists.glob("*_InRelease")
    assert stored.read_bytes() == (fake.root / "debian/dists/trixie/InRelease").read_bytes()


def test_the_engine_builds_without_the_proxy_when_every_index_verifies(fake, monkeypatch, capsys):
    monkeypatch.setenv("ZR_DEBIAN_MIRROR", fake.url)
    monkeypatch.setenv(mir.KEYRING_ENV, str(fake.keyring))
    checks = eng.index_plan(eng.HOSTS["debian13-amd64"], ("trixie",))
    assert eng.unverified_detail(checks) == ""
    assert "WARNING" not in capsys.readouterr().err


def test_the_engine_warns_once_and_falls_back_for_the_mismatched_architecture(fake, monkeypatch, capsys):
    monkeypatch.setenv("ZR_DEBIAN_MIRROR", fake.url)
    monkeypatch.delenv(mir.FALLBACK_ENV, raising=False)
    monkeypatch.setenv(mir.KEYRING_ENV, str(fake.keyring))
    checks = eng.index_plan(eng.HOSTS["debian13-s390x"], ("trixie",))
    assert "main/binary-s390x/Packages.xz" in eng.unverified_detail(checks)
    err = capsys.readouterr().err
    assert err.count("WARNING") == 1
    assert "not covered by Debian's signature" in err


@pytest.mark.negative(invariant="the index fallback is served only when allowed",
                      expects="with ZR_INDEX_FALLBACK=refuse the host cannot be built, said in one sentence")
def test_the_engine_refuses_the_mismatched_index_with_one_sentence_when_told_to(fake, monkeypatch):
    monkeypatch.setenv("ZR_DEBIAN_MIRROR", fake.url)
    monkeypatch.setenv(mir.FALLBACK_ENV, "refuse")
    monkeypatch.setenv(mir.KEYRING_ENV, str(fake.keyring))
    with pytest.raises(mir.MirrorError) as err:
        eng.index_plan(eng.HOSTS["debian13-s390x"], ("trixie",))
    message = str(err.value)
    assert "\n" not in message
    assert "debian13-s390x cannot be built" in message
    assert "ZR_INDEX_FALLBACK=refuse" in message


@pytest.mark.negative(invariant="a host that cannot be built is tried once per run",
                      expects="one build attempt and six errors, the first naming the cause")
def test_a_failed_host_build_is_tried_once_per_run_and_every_test_reports_it(fake, tmp_path):
    """Two xdist workers, six s390x tests, a mirror that serves none of the lock's files: one attempt, six
    errors (the build fetches the lock's base packages first; the fake mirror answers 404)."""
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_inner.py").write_text(textwrap.dedent("""
        import pytest

        @pytest.mark.arch_dependent("this test needs the s390x host's image")
        @pytest.mark.parametrize("n", range(6))
        def test_needs_the_host(host, n):
            assert host.run("true").rc == 0
    """))
    (inner / "pytest.ini").write_text("[pytest]\n")
    from checks.hosts import lock as lk

    first = lk.read("debian13-s390x").layer("base")[0].path.split("/", 1)[1]
    before = fake.count("/" + first.split("/")[-1].replace("+", "%2B"))
    env = dict(os.environ, PYTHONPATH=str(eng.REPO), ZR_HOSTS="debian13-s390x", ZR_DEBIAN_MIRROR=fake.url,
               ZR_INDEX_FALLBACK="refuse", ZR_IMAGE_PREFIX=f"zrtest-once-{os.getpid()}",
               ZR_WORKDIR=str(tmp_path / "work"), ZR_DEBIAN_KEYRING=str(fake.keyring))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "checks.hosts.plugin", "-p", "no:cacheprovider",
         "."],
        cwd=inner, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    out = proc.stdout + proc.stderr
    assert "6 errors" in out, out
    assert fake.count("/" + first.split("/")[-1].replace("+", "%2B")) - before == 1, \
        "the base build was attempted more than once"
    # Each error's own section: the first test names the cause, the five others refer to it in one line.
    details = out.split("short test summary info")[0]  # the one-line summary repeats each message
    sections = re.split(r"\n_+ ERROR at setup of ", details)[1:]
    assert len(sections) == 6, out
    firsts = [s for s in sections if "is not available in this run" not in s]
    assert len(firsts) == 1, out
    assert "container hosts: The Debian mirror does not serve" in firsts[0]
    assert "Traceback" not in out
    for section in sections:
        message = [ln for ln in section.splitlines() if ln.startswith("E ") or "container hosts:" in ln]
        assert len(message) == 1, section


def _load_badges_extension():
    sys.path.insert(0, str(eng.REPO / "docs" / "_ext"))
    try:
        import badges
    finally:
        sys.path.pop(0)
    return badges


@pytest.mark.uses("crypto/packages/verify-packages.sh")
def test_a_run_on_a_host_built_from_an_unverified_index_is_recorded_and_its_badge_says_so(tmp_path):
    from types import SimpleNamespace

    from checks.zrunbook_plugin import ResultsRecorder

    rel = "crypto/packages/verify-packages.sh"
    digest = hashlib.sha256((eng.SNIPPETS / rel).read_bytes()).hexdigest()
    hosts = ("debian13-amd64", "debian13-s390x")
    checks = {rel: [{"checker": "testinfra", "host": h, "test": f"t[{h}]"} for h in hosts]}
    config = SimpleNamespace(rootpath=eng.REPO, zr_coverage=checks, getoption=lambda name: False)
    recorder = ResultsRecorder(config, tmp_path / "results.json")
    unverified = "unverified: dists/trixie/main/binary-s390x/Packages.xz: served 1 bytes"
    for host, index in (("debian13-s390x", unverified), ("debian13-amd64", "verified")):
        recorder.pytest_runtest_logreport(SimpleNamespace(
            when="call", outcome="passed", nodeid=f"t[{host}]", duration=1.0,
            user_properties=[("zr_snippet", [rel, "testinfra", host]), ("zr_host_index", [host, index])]))
    recorder.pytest_sessionfinish(SimpleNamespace(exitstatus=0))
    results = json.loads((tmp_path / "results.json").read_text())
    runs = {r["host"]: r for r in results["snippets"][rel]["runs"]}
    assert runs["debian13-s390x"]["index"] == unverified
    assert "index" not in runs["debian13-amd64"]

    badges = _load_badges_extension()
    app = SimpleNamespace(env=SimpleNamespace(zr_ledger=ledger.view(results, checks), zr_digests={rel: digest}))
    texts = [badges.badge_text(e) for e in badges.badge_entries(app, rel)]
    assert texts == ["testinfra · debian13-amd64 · passed", "testinfra · debian13-s390x · passed · packages unverified"]
