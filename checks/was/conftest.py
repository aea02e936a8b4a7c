"""WAS chapter fixtures: Open Liberty on a container host (checks/was/test_liberty.py, checks/was/bench_liberty.py).

``liberty_host``: the amd64 host started from the WAS chapter's VERIFY_KEY state with the Open Liberty runtime
(checks/hosts/liberty.py) mounted read-only at /opt/wlp, pkcsslotd running and the page's files installed; its
``zr_netns`` is the container's network namespace, for a scan from this machine. ``running``: the same host with
the token key's certificate signed by a test CA and the server started by the page's start-server.sh; it prints
the start time. ``serving``: the same, once per module, for tests that only connect to the server. Parametrized
over the native host only (ZR_HOSTS applies, checks/hosts/plugin.py).
"""

from __future__ import annotations

import contextlib
import re
import time

import pytest

from checks.hosts import liberty
from checks.hosts.jsse import VERIFY_KEY
from checks.hosts.steps import reads, start_pkcsslotd
from checks.hosts.util import output

NATIVE = "debian13-amd64"


@contextlib.contextmanager
def _liberty_host(host_name: str, pool):
    wlp = liberty.runtime()
    host = pool.start(host_name, "-v", f"{wlp}:{liberty.IN_CONTAINER}:ro", state=VERIFY_KEY)
    try:
        start_pkcsslotd(host)
        liberty.install(host)
        pid = pool.engine().run("inspect", "-f", "{{.State.Pid}}", host.zr_container).stdout.strip()
        host.zr_netns = f"/proc/{pid}/ns/net"
        yield host
    finally:
        pool.remove(host)


def _start(host):
    ca = liberty.sign_with_test_ca(host)
    t0 = time.monotonic()
    result = liberty.start(host)
    assert result.rc == 0, output(result)
    print(f"Open Liberty {liberty.VERSION}: start-server.sh returned after {time.monotonic() - t0:.1f} s; "
          + (re.search(r"started in ([\d.]+) seconds", result.stdout) or [None, "?"])[1] + " s by the server's count")
    return host, ca, result


@pytest.fixture(params=[NATIVE], ids=str)
def liberty_host(request, zr_host_pool):
    with _liberty_host(request.param, zr_host_pool) as host:
        yield host


@pytest.fixture
def running(liberty_host):
    """A server of the test's own: for tests that stop, edit or restart it."""
    return _start(liberty_host)


@pytest.fixture(scope="module", params=[NATIVE], ids=str)
# the Liberty server's files and its start step
@reads("was/liberty/jvm.options", "was/liberty/liberty-pkcs11.security", "was/liberty/start-server.sh")
def serving(request, zr_host_pool):
    """One server for a module's read-only tests (they only connect to it): started once, on one worker when the
    module carries an xdist_group."""
    with _liberty_host(request.param, zr_host_pool) as host:
        yield _start(host)
