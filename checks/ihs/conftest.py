"""IHS chapter fixtures: a container host whose network namespace a scanner on this machine can enter.

The runbook's container hosts run with ``--network none``, so nothing outside the container can reach
a server in it. A TLS policy scan (sslyze, a Python tool installed on this machine) needs to, so
``published_host`` starts one more container from the same debian13-amd64 image, still with
``--network none``, and records the path of its network namespace (``/proc/<pid>/ns/net``): the scan
runs under ``nsenter --net=<that path>`` and reaches the server on the container's own 127.0.0.1:443.
The container keeps no network at all; the scan needs root (nsenter), as `make check` has.
It is labelled like the plugin's containers so the run's sweep removes it too.
Use it with ``@pytest.mark.parametrize("published_host", ["debian13-amd64"], indirect=True)``, so the
test's host is known to the coverage plugin and its id names the host.
"""

import os

import pytest
import testinfra

from zrunbook.hosts import engine as eng


@pytest.fixture
def published_host(request, zr_host_pool):
    engine = zr_host_pool.engine()
    spec = eng.HOSTS[request.param]
    image = zr_host_pool.image(request.param)
    name = f"zr-published-{request.config.zr_run_id[:8]}-{os.getpid()}-{request.node.name[-20:]}"
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    eng._LIVE.add((engine, name))
    try:
        engine.run(
            "run", "-d", "--init", "--network", "none", "--name", name,
            "--hostname", spec.name, "--label", f"zrunbook.run={request.config.zr_run_id}",
            "--label", f"zrunbook.owner={eng.owner_label()}", "--label", f"zrunbook.host={spec.name}",
            "-v", f"{eng.SNIPPETS}:{eng.SNIPPETS_IN_CONTAINER}:ro", image, "sleep", "infinity",
        )  # fmt: skip
        pid = engine.run("inspect", "-f", "{{.State.Pid}}", name).stdout.strip()
        host = testinfra.get_host(f"{engine.scheme}://{name}")
        host.zr_container, host.zr_name, host.zr_port = name, spec.name, 443
        host.zr_netns = f"/proc/{pid}/ns/net"
        yield host
    finally:
        engine.remove(name)
