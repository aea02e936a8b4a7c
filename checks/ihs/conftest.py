"""IHS chapter fixtures: a container host whose port 443 is published on the loopback address.

The runbook's container hosts run with ``--network none``, so nothing outside the container can reach
a server in it. A TLS policy scan (sslyze, a Python tool run on this machine) needs to, so
``published_host`` starts one more container from the same debian13-amd64 image, on Docker's default
bridge with ``-p 127.0.0.1::443`` (traffic from this machine's loopback only), labelled like the
plugin's containers so the run's sweep removes it too. It yields the testinfra host and the port.
Use it with ``@pytest.mark.parametrize("published_host", ["debian13-amd64"], indirect=True)``, so the
test's host is known to the coverage plugin and its id names the host.
"""

import os

import pytest
import testinfra

from checks.hosts import engine as eng


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
            "run", "-d", "--init", "--network", "bridge", "-p", "127.0.0.1::443", "--name", name,
            "--hostname", spec.name, "--label", f"zrunbook.run={request.config.zr_run_id}",
            "--label", f"zrunbook.owner={eng.owner_label()}", "--label", f"zrunbook.host={spec.name}",
            "-v", f"{eng.SNIPPETS}:{eng.SNIPPETS_IN_CONTAINER}:ro", image, "sleep", "infinity",
        )  # fmt: skip
        port = engine.run("port", name, "443/tcp").stdout.strip().splitlines()[0].rsplit(":", 1)[1]
        host = testinfra.get_host(f"{engine.scheme}://{name}")
        host.zr_container, host.zr_name, host.zr_port = name, spec.name, int(port)
        yield host
    finally:
        engine.remove(name)
