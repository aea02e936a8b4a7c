"""The set-up `make html`, `make pdf` and `make check` run first (.ci/prereqs.sh --make PURPOSE).

With nothing missing it is silent and quick; a user without root who lacks something gets one sentence
naming the sudo command, never a traceback. Missing packages are simulated with ZR_PREREQS_MISSING (the
script counts the packages it names as not installed); the user is a real one without root: the tests
drop to `nobody` with setpriv when they run as root.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PURPOSES = ("html", "pdf", "check")
NOBODY = 65534


def as_user(cmd: list[str]) -> list[str]:
    """cmd run by a user without root: this one, or `nobody` when the tests run as root."""
    if os.geteuid() != 0:
        return cmd
    if not shutil.which("setpriv"):
        pytest.fail("setpriv (util-linux) is needed to run the set-up as a user without root")
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *cmd]


@pytest.fixture(scope="module")
def make_tree():
    """The Makefile and .ci/ in a folder any user may read (the checkout may sit where `nobody` cannot)."""
    path = Path(tempfile.mkdtemp(prefix="zr-setup-"))
    path.chmod(0o755)
    shutil.copy2(ROOT / "Makefile", path / "Makefile")
    shutil.copytree(ROOT / ".ci", path / ".ci")
    for p in [path, *path.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    yield path
    shutil.rmtree(path)


def run(cmd: list[str], cwd: Path, missing: str = "", **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ZR_PREREQS_MISSING"} | extra
    if missing:
        env["ZR_PREREQS_MISSING"] = missing
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60)


def one_sentence(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if not ln.startswith("make: *** ")]  # make's own status line
    assert "Traceback" not in stderr
    assert len(lines) == 1, f"expected one sentence, got:\n{stderr}"
    assert lines[0].startswith("zrunbook"), lines[0]
    assert lines[0].endswith("again."), lines[0]
    return lines[0]


@pytest.mark.parametrize("purpose", PURPOSES)
def test_probe_is_silent_and_quick_when_nothing_is_missing(purpose):
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        proc = run(["bash", ".ci/prereqs.sh", "--make", purpose], ROOT)
        times.append(time.monotonic() - t0)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), (
            f"`make {purpose}` would set something up first: {proc.stdout}{proc.stderr}")
    assert statistics.median(times) <= 1.0, f"the probe took {times} s (target <= 1 s)"


def test_probe_names_what_is_missing_and_changes_nothing():
    proc = run(["bash", ".ci/prereqs.sh", "--probe", "pdf"], ROOT, missing="graphviz latexmk")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == ["package graphviz", "package latexmk"]


@pytest.mark.parametrize("daemon", [False, True])
def test_a_docker_client_without_a_daemon_is_no_engine(tmp_path, daemon):
    """A machine image may carry a docker client and no daemon (this project's CI machine did): the set-up must
    install docker.io there, not stop at "no dockerd was found"."""
    client = tmp_path / "docker"
    client.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n")
    client.chmod(0o755)
    daemons = tmp_path / "sbin"
    daemons.mkdir()
    if daemon:
        (daemons / "dockerd").write_text("#!/bin/sh\n")
        (daemons / "dockerd").chmod(0o755)
    # docker.io counted as not installed (once installed, dpkg knows it, whatever else is missing)
    proc = run(["bash", ".ci/prereqs.sh", "--probe", "hosts"], ROOT, missing="docker.io", ZR_ENGINE=str(client),
               ZR_DAEMON_PATH=str(daemons))
    assert proc.returncode == 1, proc.stdout  # the engine does not answer either way
    assert "engine" in proc.stdout.splitlines()
    assert ("package docker.io" in proc.stdout.splitlines()) is not daemon, proc.stdout


@pytest.mark.parametrize("purpose", PURPOSES)
def test_user_without_root_gets_one_sentence_naming_the_sudo_command(make_tree, purpose):
    proc = run(as_user(["bash", ".ci/prereqs.sh", "--make", purpose]), make_tree, missing="graphviz")
    assert proc.returncode == 1
    assert proc.stdout == ""
    sentence = one_sentence(proc.stderr)
    assert "graphviz" in sentence
    assert f"run `sudo bash .ci/prereqs.sh {purpose}` once, then `make {purpose}` again." in sentence


@pytest.mark.negative(invariant="make names the Debian packages it misses in one sentence",
                      expects="make html stops with one sentence naming graphviz and .ci/prereqs.sh html, before the "
                              "tox venv")
def test_make_html_as_user_without_root_stops_at_the_sentence(make_tree):
    proc = run(as_user(["make", "--no-print-directory", "html"]), make_tree, missing="graphviz latexmk")
    assert proc.returncode != 0
    assert one_sentence(proc.stderr) == (
        "zrunbook needs Debian packages that are missing (graphviz): run `sudo bash .ci/prereqs.sh html` once, "
        "then `make html` again.")  # latexmk is the PDF's, not the HTML's
    assert not (make_tree / "build" / "tox-venv").exists()


@pytest.mark.negative(invariant="a daemon the set-up starts does not hold the set-up's lock",
                      expects="a second set-up while the daemon it started runs finishes instead of waiting forever")
def test_a_dockerd_the_set_up_started_does_not_keep_later_set_ups_waiting(tmp_path):
    """On a machine without systemd the set-up starts dockerd in the background while it holds its lock (fd 9); a
    daemon that inherited fd 9 held the lock for as long as it ran, and every later `sudo bash .ci/prereqs.sh`
    waited on it forever (found 2026-11-29). A stand-in daemon that keeps every descriptor it was given and runs on,
    and a stand-in client that answers once the daemon has started."""
    if os.geteuid() != 0:
        pytest.fail("this case runs the set-up's install branch, which needs root: run the checks as root")
    started = tmp_path / "started"
    client = tmp_path / "docker"
    client.write_text(f"#!/bin/sh\n[ -e {started} ] || {{ echo 'Cannot connect to the Docker daemon' >&2; exit 1; }}\n")
    client.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dockerd").write_text(f"#!/bin/sh\necho $$ > {started}\nexec sleep 120\n")
    (bin_dir / "dockerd").chmod(0o755)
    env = {"ZR_ENGINE": str(client), "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "ZR_PREREQS_NO_SYSTEMD": "1"}  # the branch for a machine without systemd, on any machine
    first = run(["bash", ".ci/prereqs.sh", "hosts"], ROOT, **env)
    daemon = int(started.read_text()) if started.exists() else None
    try:
        assert first.returncode == 0, first.stdout + first.stderr
        assert "starting dockerd in the background" in first.stdout
        assert daemon is not None, "the set-up did not start the stand-in daemon"
        assert Path(f"/proc/{daemon}").exists(), "the stand-in daemon is not running"
        t0 = time.monotonic()
        try:
            second = run(["bash", ".ci/prereqs.sh", "hosts"], ROOT, **env)
        except subprocess.TimeoutExpired:
            pytest.fail("a second set-up waited 60 s for the lock the daemon the first one started holds")
        assert second.returncode == 0, second.stdout + second.stderr
        assert "nothing is missing" in second.stdout
        assert time.monotonic() - t0 < 30
    finally:
        if daemon is not None:
            subprocess.run(["kill", str(daemon)], check=False)
