"""The harness without containers: host selection, image tags, prerequisite errors, lazy collection."""

import os
import re
import subprocess
import sys
import time

import pytest

from checks.hosts import engine as eng
from checks.hosts import lock as lk
from checks.hosts.plugin import cpu_share, selected_hosts


def test_all_hosts_are_selected_when_zr_hosts_is_unset_or_empty():
    assert selected_hosts("") == ["debian13-amd64", "debian13-s390x"]


def test_zr_hosts_selects_hosts_in_canonical_order():
    assert selected_hosts("debian13-s390x") == ["debian13-s390x"]
    assert selected_hosts(" debian13-s390x,debian13-amd64 ") == ["debian13-amd64", "debian13-s390x"]


def test_an_unknown_host_name_in_zr_hosts_is_a_usage_error():
    with pytest.raises(pytest.UsageError, match="debian12-amd64"):
        selected_hosts("debian12-amd64")


def test_the_image_tag_changes_with_the_containerfile_and_only_then(tmp_path, monkeypatch):
    monkeypatch.delenv("ZR_IMAGE_PREFIX", raising=False)  # a benchmark or cold run may set its own
    engine = eng.Engine("docker", "docker")
    spec = eng.HOSTS["debian13-amd64"]
    containerfile = tmp_path / "Containerfile"
    containerfile.write_text("FROM x\n")
    monkeypatch.setattr(eng, "CONTAINERFILE", containerfile)
    first = engine.image_tag(spec)
    assert engine.image_tag(spec) == first
    containerfile.write_text("FROM x\nRUN true\n")
    assert engine.image_tag(spec) != first
    assert first.startswith("zrunbook/debian13-amd64:")


def test_the_image_tags_change_with_the_lock_and_not_with_the_mirror(tmp_path, monkeypatch):
    """The packages come from the lock, so the lock is in both tags and the mirror's address is in neither."""
    monkeypatch.delenv("ZR_IMAGE_PREFIX", raising=False)
    engine = eng.Engine("docker", "docker")
    spec = eng.HOSTS["debian13-s390x"]
    first, first_base = engine.image_tag(spec), engine.base_tag(spec)
    monkeypatch.setenv("ZR_DEBIAN_MIRROR", "http://mirror.example/debian")
    assert (engine.image_tag(spec), engine.base_tag(spec)) == (first, first_base)
    assert first_base.startswith("zrunbook/base-debian13-s390x:")
    lines = (lk.LOCKS / "debian13-s390x.tsv").read_text().splitlines()
    image_line = next(i for i, ln in enumerate(lines) if ln.startswith("image\t"))
    cells = lines[image_line].split("\t")
    cells[2] += "+zr1"  # another version of one image package
    lines[image_line] = "\t".join(cells)
    (tmp_path / "debian13-s390x.tsv").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(lk, "LOCKS", tmp_path)
    assert engine.base_tag(spec) == first_base  # the base layer did not change
    assert engine.image_tag(spec) != first


def test_the_mirror_comes_from_the_machines_apt_sources(tmp_path, monkeypatch):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n"
    )
    (tmp_path / "sources.list.d" / "other.list").write_text("deb https://packages.example/apt stable main\n")
    monkeypatch.setattr(eng, "APT_SOURCES", tmp_path)
    monkeypatch.delenv("ZR_DEBIAN_MIRROR", raising=False)
    assert eng.debian_mirror() == "http://mirror.example/debian"


def test_the_build_arguments_are_exactly_the_ones_the_containerfile_declares():
    """An argument the Containerfile never declares (the old SECURITY_MIRROR) would still change the
    image tag and force a rebuild for nothing."""
    declared = set(re.findall(r"^ARG (\w+)", eng.CONTAINERFILE.read_text(), re.M))
    for spec in eng.HOSTS.values():
        assert set(eng.Engine("docker", "docker").build_args(spec)) == declared


def test_no_container_engine_is_an_error_that_says_what_to_install(monkeypatch):
    monkeypatch.setenv("ZR_ENGINE", "/nonexistent/docker")
    with pytest.raises(eng.PrerequisiteError, match=r"apt-get install docker\.io"):
        eng.Engine.detect()


def test_an_engine_that_does_not_answer_is_an_error_that_says_how_to_start_it(tmp_path, monkeypatch):
    fake = tmp_path / "docker"
    fake.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ZR_ENGINE", str(fake))
    with pytest.raises(eng.PrerequisiteError, match="Cannot connect.*dockerd >/var/log/dockerd.log"):
        eng.Engine.detect()


def answering_cli(path):
    """A stand-in engine client that answers `info` and nothing else."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('#!/bin/sh\n[ "$1" = info ] && echo "{}" && exit 0\nexit 1\n')
    path.chmod(0o755)
    return path


def test_podman_is_used_through_the_same_cli_when_it_is_the_only_engine(tmp_path, monkeypatch):
    fake = answering_cli(tmp_path / "podman")
    monkeypatch.delenv("ZR_ENGINE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(eng, "CANDIDATES", ("/nonexistent/docker", "docker", "podman"))
    engine = eng.Engine.detect()
    assert (engine.cli, engine.kind, engine.scheme) == (str(fake), "podman", "podman")


def test_the_engines_own_docker_client_is_preferred_to_the_first_on_path(tmp_path, monkeypatch):
    """A `docker` first on PATH may lack buildx; /usr/bin/docker (the engine's own) comes first."""
    assert eng.CANDIDATES[0] == "/usr/bin/docker"
    answering_cli(tmp_path / "docker")
    answering_cli(tmp_path / "podman")
    own = answering_cli(tmp_path / "own" / "docker")
    monkeypatch.delenv("ZR_ENGINE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(eng, "CANDIDATES", (str(own), "docker", "podman"))
    assert eng.Engine.detect().cli == str(own)


def test_missing_qemu_binfmt_is_an_error_that_says_what_to_install(tmp_path, monkeypatch):
    (tmp_path / "status").write_text("enabled\n")
    monkeypatch.setattr(eng, "BINFMT_MISC", tmp_path)
    with pytest.raises(eng.PrerequisiteError, match="apt-get install qemu-user-static binfmt-support"):
        eng.check_binfmt(eng.HOSTS["debian13-s390x"])
    eng.check_binfmt(eng.HOSTS["debian13-amd64"])  # native: no binfmt needed


def test_qemu_binfmt_without_the_fix_binary_flag_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "status").write_text("enabled\n")
    (tmp_path / "qemu-s390x").write_text("enabled\ninterpreter /usr/bin/qemu-s390x\nflags: P\n")
    monkeypatch.setattr(eng, "BINFMT_MISC", tmp_path)
    with pytest.raises(eng.PrerequisiteError, match="F \\(fix binary\\) flag"):
        eng.check_binfmt(eng.HOSTS["debian13-s390x"])


def test_a_base_to_build_without_debootstrap_is_an_error_that_says_what_to_install(monkeypatch):
    monkeypatch.setattr(eng.shutil, "which", lambda name: None)
    engine = eng.Engine("docker", "docker")
    spec = eng.HOSTS["debian13-amd64"]
    with pytest.raises(eng.PrerequisiteError, match="apt-get install debootstrap"):
        engine._debootstrap_base(spec, engine.base_tag(spec))


def test_a_dead_owner_process_makes_its_containers_orphans():
    proc = subprocess.Popen(["true"])
    live = eng.owner_label(proc.pid)
    proc.wait()
    assert eng.owner_alive(eng.owner_label())
    assert not eng.owner_alive(live)
    assert eng.owner_alive("another-machine:1:1")


def test_a_run_marker_is_created_on_a_machine_that_never_ran_the_hosts(tmp_path, monkeypatch):
    """A fresh machine has no work folder yet (the CI failure of stop 12 before this fix)."""
    monkeypatch.setenv("ZR_WORKDIR", str(tmp_path / "never" / "made"))
    marker = eng.touch_run_marker("abc123")
    assert marker.is_file()
    assert marker == tmp_path / "never" / "made" / "runs" / "abc123"


def test_collection_starts_no_engine_and_builds_nothing(tmp_path):
    """Sphinx runs pytest --collect-only to map checkers to snippets: that must be fast and inert."""
    env = dict(os.environ, ZR_ENGINE="/nonexistent/docker", ZR_WORKDIR=str(tmp_path / "work"), ZR_HOSTS="")
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "checks.hosts.plugin", "checks/crypto"],
        cwd=eng.REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_pkcsslotd_runs_after_start[debian13-amd64]" in proc.stdout
    assert time.monotonic() - t0 < 10
    assert not (tmp_path / "work").exists()


class RecordingEngine(eng.Engine):
    """An engine whose CLI lists the given tags and records every other call."""

    def __init__(self, tags):
        super().__init__("docker", "docker")
        self.tags, self.calls = tags, []

    def run(self, *args, **kwargs):
        self.calls.append(args)
        out = "\n".join(self.tags) if args[0] == "images" else ""
        return subprocess.CompletedProcess(args, 0, out, "")


def test_a_tag_another_run_uses_is_not_removed_as_stale(tmp_path, monkeypatch):
    """Two checkouts with different snippets run at once: each builds its own tag of a state, and the
    one that finishes first must not delete the other's tag (it once cost a run 39 errors)."""
    monkeypatch.setenv("ZR_WORKDIR", str(tmp_path))
    repo = "zrunbook/debian13-amd64-token"
    mine, theirs, old = f"{repo}:aaa", f"{repo}:bbb", f"{repo}:ccc"
    eng.lease(mine)
    eng.lease(theirs)
    eng.lease(old)
    past = time.time() - (eng.LEASE_HOURS * 3600 + 60)
    os.utime(eng.lease_path(old), (past, past))
    engine = RecordingEngine([mine, theirs, old, f"{repo}:ddd"])
    engine.remove_stale_tags(mine)
    removed = [c for c in engine.calls if c[0] == "rmi"]
    assert removed == [("rmi", old, f"{repo}:ddd")]


def _collect(*args, every_host=""):
    env = dict(os.environ, ZR_ENGINE="/nonexistent/docker", ZR_HOSTS="", ZR_EVERY_HOST=every_host)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", *args],
                          cwd=eng.REPO, env=env, capture_output=True, text=True, timeout=120)
    return proc


def test_the_s390x_host_runs_only_the_tests_declared_arch_dependent():
    """Under qemu a test costs five to ten times what it costs on amd64: the s390x host runs the tests whose
    outcome can differ there (declared, with a reason), every other host test runs on amd64 only, and
    ZR_EVERY_HOST=1 brings the rest back."""
    proc = _collect("checks/crypto/test_crypto_packages.py", "checks/verify/test_doctor.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = proc.stdout
    assert "test_pkcsconf_lists_the_token_of_the_architecture[debian13-s390x]" in ids  # declared
    assert "test_pkcsslotd_runs_after_start[debian13-amd64]" in ids
    assert "test_pkcsslotd_runs_after_start[debian13-s390x]" not in ids  # not declared: amd64 only
    assert "test_a_healthy_host_has_no_signature[debian13-s390x]" not in ids
    every = _collect("checks/crypto/test_crypto_packages.py", every_host="1")
    assert "test_pkcsslotd_runs_after_start[debian13-s390x]" in every.stdout, every.stdout + every.stderr


@pytest.mark.parametrize("mark", ["arch_dependent", "exclusive_cpu"])
def test_a_host_mark_without_a_reason_is_a_usage_error(tmp_path, mark):
    test = tmp_path / "test_no_reason.py"
    test.write_text(f"import pytest\n\n@pytest.mark.{mark}()\ndef test_x(host):\n    pass\n")
    proc = _collect("-p", "checks.hosts.plugin", "--rootdir", str(eng.REPO), str(test))
    assert proc.returncode != 0
    assert f"{mark} needs a reason" in proc.stdout + proc.stderr


@pytest.mark.negative(invariant="an amd64-only mark says why",
                      expects="a bare only_hosts('debian13-amd64',) fails collection: needs why=")
def test_an_amd64_only_mark_must_say_what_stops_the_test_on_s390x(tmp_path):
    """amd64 runs every host test already: a mark that leaves out the s390x host changes only ZR_EVERY_HOST=1, so
    it must say why (only_hosts(..., why=...)). A bare one is a usage error; with a reason it collects, on amd64
    only even with ZR_EVERY_HOST=1; an s390x-only mark needs no reason."""
    bare = tmp_path / "test_bare.py"
    bare.write_text('import pytest\n\n@pytest.mark.only_hosts("debian13-amd64")\ndef test_x(host):\n    pass\n')
    proc = _collect("-p", "checks.hosts.plugin", "--rootdir", str(eng.REPO), str(bare))
    assert proc.returncode != 0
    assert "only_hosts('debian13-amd64',) needs why=" in proc.stdout + proc.stderr
    said = tmp_path / "test_said.py"
    said.write_text('import pytest\n\n@pytest.mark.only_hosts("debian13-amd64", why="amd64 packages")\n'
                    'def test_x(host):\n    pass\n\n@pytest.mark.only_hosts("debian13-s390x")\ndef test_y(host):\n'
                    '    pass\n')
    proc = _collect("-p", "checks.hosts.plugin", "--rootdir", str(eng.REPO), str(said), every_host="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_x[debian13-amd64]" in proc.stdout
    assert "test_x[debian13-s390x]" not in proc.stdout
    assert "test_y[debian13-s390x]" in proc.stdout


def _try_lock(lock, exclusive: bool) -> str:
    """Another process asks for the lock without waiting: 'got' or 'busy'."""
    code = ("import fcntl, sys\n"
            f"f = open({str(lock)!r}, 'a')\n"
            f"try: fcntl.flock(f, {'fcntl.LOCK_EX' if exclusive else 'fcntl.LOCK_SH'} | fcntl.LOCK_NB)\n"
            "except BlockingIOError: print('busy'); sys.exit()\n"
            "print('got')\n")
    env = {k: v for k, v in os.environ.items() if k != "ZR_CPU_LOCK_HELD"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True).stdout.strip()


def test_an_exclusive_cpu_test_holds_every_other_test_off_and_ordinary_tests_share(tmp_path, monkeypatch):
    monkeypatch.delenv("ZR_CPU_LOCK_HELD", raising=False)
    lock = tmp_path / "cpu.lock"
    with cpu_share(False, lock):
        assert _try_lock(lock, exclusive=False) == "got"  # ordinary tests run side by side
        assert _try_lock(lock, exclusive=True) == "busy"  # an exclusive one waits for them
    with cpu_share(True, lock):
        assert _try_lock(lock, exclusive=False) == "busy"  # while it runs, nothing else does
    assert _try_lock(lock, exclusive=True) == "got"

