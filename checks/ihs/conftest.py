"""IHS chapter fixtures: a container host whose network namespace a scanner on this machine can enter.

The runbook's container hosts run with ``--network none``, so nothing outside the container can reach
a server in it. A TLS policy scan (sslyze, a Python tool installed on this machine) needs to, so
``published_host`` starts one more container from the same debian13-amd64 image, still with
``--network none``, and records the path of its network namespace (``/proc/<pid>/ns/net``): the scan
runs under ``nsenter --net=<that path>`` and reaches the server on the container's own 127.0.0.1:443.
The container keeps no network at all; the scan needs root (nsenter), as `make check` has.
It is started by the host pool like every host container (labelled, removed after the test, swept with its run).
Use it with ``@pytest.mark.parametrize("published_host", ["debian13-amd64"], indirect=True)``, so the
test's host is known to the coverage plugin and its id names the host. A test marked
``@pytest.mark.from_state(STATE)`` starts from that prepared state's image, as ``fresh_host`` does.
"""

import pytest


@pytest.fixture
def published_host(request, zr_host_pool):
    marker = request.node.get_closest_marker("from_state")
    host = zr_host_pool.start(request.param, state=marker.args[0] if marker else None)
    try:
        pid = zr_host_pool.engine().run("inspect", "-f", "{{.State.Pid}}", host.zr_container).stdout.strip()
        host.zr_port, host.zr_netns = 443, f"/proc/{pid}/ns/net"
        yield host
    finally:
        zr_host_pool.remove(host)
