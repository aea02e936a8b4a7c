"""WAS chapter fixtures: Open Liberty on a container host (checks/was/test_liberty.py, checks/was/bench_liberty.py).

``liberty_host``: the amd64 host started from the WAS chapter's VERIFY_KEY state with the Open Liberty runtime
(checks/hosts/liberty.py) mounted read-only at /opt/wlp, pkcsslotd running and the page's files installed; its
``zr_netns`` is the container's network namespace, for a scan from this machine. ``running``: the same host with
the token key's certificate signed by a test CA and the server started by the page's start-server.sh; it prints
the start time. Parametrized over the native host only (ZR_HOSTS applies, checks/hosts/plugin.py).
"""

from __future__ import annotations

import re
import time

import pytest

from checks.hosts import liberty
from checks.hosts.jsse import VERIFY_KEY
from checks.hosts.steps import start_pkcsslotd
from checks.hosts.util import output

NATIVE = "debian13-amd64"


@pytest.fixture(params=[NATIVE], ids=str)
def liberty_host(request, zr_host_pool):
    wlp = liberty.runtime()
    host = zr_host_pool.start(request.param, "-v", f"{wlp}:{liberty.IN_CONTAINER}:ro", state=VERIFY_KEY)
    try:
        start_pkcsslotd(host)
        liberty.install(host)
        pid = zr_host_pool.engine().run("inspect", "-f", "{{.State.Pid}}", host.zr_container).stdout.strip()
        host.zr_netns = f"/proc/{pid}/ns/net"
        yield host
    finally:
        zr_host_pool.remove(host)


@pytest.fixture
def running(liberty_host):
    ca = liberty.sign_with_test_ca(liberty_host)
    t0 = time.monotonic()
    result = liberty.start(liberty_host)
    assert result.rc == 0, output(result)
    print(f"Open Liberty {liberty.VERSION}: start-server.sh returned after {time.monotonic() - t0:.1f} s; "
          + (re.search(r"started in ([\d.]+) seconds", result.stdout) or [None, "?"])[1] + " s by the server's count")
    return liberty_host, ca, result
