"""`make serve` (python -m zrunbook serve, zrunbook/serve.py) is a live preview: it serves on 127.0.0.1 only and
rebuilds a page when its source changes. Run here on a two-page project of its own, with the command line
zrunbook.serve builds for the guide."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request

from zrunbook import serve


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_preview_listens_on_loopback_only_and_rebuilds_on_change(tmp_path):
    src = tmp_path / "docs"
    src.mkdir()
    (src / "conf.py").write_text('project = "preview"\nextensions = ["myst_parser"]\n')
    (src / "index.md").write_text("# Preview\n\nfirst version\n")
    port = free_port()
    cmd = serve.command(src=src, out=tmp_path / "out", port=port, conf=src)
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}/index.html"
        assert "first version" in fetch(url)
        listening = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout
        local = [line.split()[3] for line in listening.splitlines()]  # State Recv-Q Send-Q Local Peer
        assert local == [f"127.0.0.1:{port}"], listening
        (src / "index.md").write_text("# Preview\n\nsecond version\n")
        deadline = time.monotonic() + 60
        while "second version" not in fetch(url):
            assert time.monotonic() < deadline, "the page was not rebuilt within 60 s of the change"
            time.sleep(0.5)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
