"""No container outlives a run: passing, failing, interrupted (Ctrl-C, SIGTERM) or killed.

Each case runs a tiny pytest session in a subprocess against a real container host, and then asks
the engine for containers the subprocess owned. The host is the first selected one (ZR_HOSTS).
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from checks.hosts import engine as eng
from checks.hosts.plugin import SELECTED

HOST = SELECTED[:1]
INNER = """
import os, time

def test_inner(host, fresh_host):
    assert host.run("true").rc == 0
    with open(os.environ["ZR_INNER_READY"], "w") as fh:
        fh.write(host.zr_container + " " + fresh_host.zr_container)
    if os.environ["ZR_INNER_MODE"] == "interrupt":
        time.sleep(120)
    assert os.environ["ZR_INNER_MODE"] == "pass"
"""


def containers_owned_by(engine, pid: int) -> list[str]:
    out = engine.run("ps", "-a", "--filter", "label=zrunbook.owner", "--format", '{{.Label "zrunbook.owner"}}')
    return [label for label in out.stdout.split() if label.split(":")[1] == str(pid)]


def run_inner(tmp_path, zr_host, mode, sig=None):
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(INNER))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    ready = tmp_path / "ready"
    env = dict(os.environ, PYTHONPATH=str(eng.REPO), ZR_HOSTS=zr_host, ZR_INNER_MODE=mode, ZR_INNER_READY=str(ready))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "checks.hosts.plugin", "-p", "no:cacheprovider", "."],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        # A run started in the background (no job control) inherits SIGINT ignored: undo that, as a
        # terminal's Ctrl-C reaches a foreground run with the default handler.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    engine = eng.Engine.detect()
    if sig is not None:
        deadline = time.monotonic() + 600  # the image may still have to be built
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ready.exists(), "the inner session never started its containers"
        assert len(containers_owned_by(engine, proc.pid)) == 2, "expected a shared and a fresh container"
        proc.send_signal(sig)
    out, _ = proc.communicate(timeout=600)
    return proc, out, engine


@pytest.mark.parametrize("zr_host", HOST)
@pytest.mark.parametrize(("mode", "rc"), [("pass", 0), ("fail", 1)])
def test_no_container_is_left_after_a_finished_run(tmp_path, zr_host, mode, rc):
    proc, out, engine = run_inner(tmp_path, zr_host, mode)
    assert proc.returncode == rc, out
    assert (tmp_path / "ready").exists(), out
    assert containers_owned_by(engine, proc.pid) == []


@pytest.mark.parametrize("zr_host", HOST)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_no_container_is_left_after_an_interrupted_run(tmp_path, zr_host, sig):
    proc, out, engine = run_inner(tmp_path, zr_host, "interrupt", sig)
    assert proc.returncode == 2, out  # pytest's "interrupted"
    assert containers_owned_by(engine, proc.pid) == []


@pytest.mark.parametrize("zr_host", HOST)
def test_containers_of_a_killed_run_are_swept_by_the_next_session(zr_host_pool, zr_host):
    engine = zr_host_pool.engine()
    image = zr_host_pool.image(zr_host)
    dead = subprocess.Popen(["true"])
    owner = eng.owner_label(dead.pid)
    dead.wait()
    name = f"zr-orphan-test-{os.getpid()}"
    engine.run("create", "--label", f"zrunbook.owner={owner}", "--name", name, image, "true")
    try:
        assert name in engine.run("ps", "-a", "--filter", f"name={name}", "--format", "{{.Names}}").stdout
        engine.sweep_orphans()
        assert engine.run("ps", "-a", "--filter", f"name={name}", "--format", "{{.Names}}").stdout == ""
    finally:
        engine.remove(name)


@pytest.mark.parametrize("zr_host", HOST)
def test_a_removed_fresh_container_is_gone_from_the_engine(zr_host_pool, zr_host):
    h = zr_host_pool.start(zr_host)
    engine = zr_host_pool.engine()
    assert engine.run("ps", "-q", "--filter", f"name={h.zr_container}").stdout.strip()
    zr_host_pool.remove(h)
    assert engine.run("ps", "-aq", "--filter", f"name={h.zr_container}").stdout.strip() == ""


@pytest.mark.negative(invariant="a failed image build leaves no image behind",
                      expects="the build fails (building ... failed) and no image is left")
def test_a_failed_image_build_leaves_no_image_behind(zr_host_pool, tmp_path, monkeypatch):
    """A Containerfile that fails after one successful step: neither the tag nor the step's image stays."""
    engine = zr_host_pool.engine()
    spec = eng.HOSTS["debian13-amd64"]
    base = engine.ensure_base(spec)  # the real, cached base: this test builds only the host layer
    containerfile = tmp_path / "Containerfile"
    containerfile.write_text(f"ARG BASE\nFROM ${{BASE}}\nRUN touch /zr-step-one-{os.getpid()}\nRUN false\n")
    monkeypatch.setattr(eng, "CONTAINERFILE", containerfile)
    monkeypatch.setenv("ZR_IMAGE_PREFIX", f"zrfailtest{os.getpid()}")
    monkeypatch.setattr(engine, "base_tag", lambda _spec: base)
    before = set(engine.run("images", "-aq", "--no-trunc").stdout.split())
    with pytest.raises(RuntimeError, match="building .* failed"):
        engine.ensure_image(spec)
    after = set(engine.run("images", "-aq", "--no-trunc").stdout.split())
    assert after - before == set(), "the failed build left images behind"
    assert engine.run("images", "-q", f"zrfailtest{os.getpid()}/*").stdout.strip() == ""
