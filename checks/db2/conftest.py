"""Fixture ``ipc_host``: a container host in which a sysctl.d file of IPC parameters can really be loaded.

IPC sysctls (kernel.shm*, kernel.sem, kernel.msg*) are per IPC namespace, but Docker mounts /proc/sys
read-only, so ``sysctl -p`` fails in the runbook's ordinary hosts. Passing the values as ``--sysctl``
would not test the snippet. What is done instead, and why:

* the container runs as ``nobody`` with every capability dropped and ``no-new-privileges``;
* ``systempaths=unconfined`` lifts Docker's masks on /proc (the kernel refuses a new proc mount in a
  user namespace while parts of /proc are masked) and ``seccomp=unconfined`` allows ``unshare``
  (Docker's default profile permits it only with CAP_SYS_ADMIN);
* the test then runs ``unshare --user --map-root-user --ipc --mount --pid --fork --mount-proc``: root
  of a new user namespace that owns a new IPC namespace, with a fresh /proc. The kernel lets that
  root write the IPC sysctls of its own namespace and nothing else: global keys (vm.*, fs.*) stay
  owned by the machine's root and are refused (checked once by hand, and by a test here).

Only on debian13-amd64: under qemu-user (debian13-s390x) ``unshare --user`` fails with EINVAL, as
the kernel refuses a new user namespace to a multi-threaded process and the emulator runs threads of
its own. The IPC sysctls are the host kernel's either way; s390x would only add an emulated
``sysctl`` binary. The s390x variants are therefore deselected (never skipped), like ``only_hosts``.

Not chosen: ``--privileged`` or CAP_SYS_ADMIN (the container's root could change the machine's
sysctls), and ``systempaths=unconfined`` with a root container (tried: root in the container could
write vm.swappiness of the machine). The container is started by the host pool like every other host
container (labelled, registered before it starts, removed by the finalizer, swept with its run).
"""

from __future__ import annotations

import shlex

import pytest

from checks.hosts import engine as eng
from checks.hosts.plugin import SELECTED

UNSHARE = "unshare --user --map-root-user --ipc --mount --pid --fork --mount-proc"
# Every user-mode emulated host (qemu-user refuses unshare --user, above).
NO_USER_NAMESPACES = {name for name, spec in eng.HOSTS.items() if spec.qemu}
# nobody, no capabilities, no new privileges; /proc unmasked and unshare allowed (the module's docstring says why)
CONFINED = ("--user", "65534:65534", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--security-opt", "systempaths=unconfined", "--security-opt", "seccomp=unconfined")


def pytest_collection_modifyitems(config, items):
    drop = [i for i in items if getattr(getattr(i, "callspec", None), "params", {}).get("ipc_host")
            in NO_USER_NAMESPACES]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [i for i in items if i not in drop]


@pytest.fixture(params=SELECTED, ids=str)
def ipc_host(request, zr_host_pool):
    """A testinfra host (user nobody) whose ``zr_ipc(cmd)`` runs cmd as root of a fresh IPC namespace."""
    host = zr_host_pool.start(request.param, *CONFINED)
    try:
        host.zr_ipc = lambda cmd: host.run(f"{UNSHARE} sh -c {shlex.quote(cmd)}")
        yield host
    finally:
        zr_host_pool.remove(host)


# --- jdbc_host: IBM's JDBC driver on a container host ------------------------------------------------------------
# The driver's jar (fetched from Maven Central, pinned: zrunbook/db2/jcc.py) mounted read-only at /opt/jcc. Only on
# the native host: the driver is platform-independent Java, and OpenJDK under qemu-user adds minutes, not evidence.
JDBC_HOSTS = {name for name, spec in eng.HOSTS.items() if not spec.qemu}


@pytest.fixture(params=sorted(JDBC_HOSTS), ids=str)
def jdbc_host(request, zr_host_pool):
    from zrunbook.db2 import jcc

    folder = jcc.jar().parent
    host = zr_host_pool.start(request.param, "-v", f"{folder}:{jcc.IN_CONTAINER}:ro")
    try:
        yield host
    finally:
        zr_host_pool.remove(host)


# --- cli_host: IBM's CLI driver (db2cli, GSKit) on a container host ----------------------------------------------
# The driver from PyPI's ibm_db wheel (pinned and unpacked once on this machine: zrunbook/clidriver.py) mounted
# read-only at /opt/ibm_db. Only on amd64: the wheel is built for x86_64 and PyPI has no s390x build of it.
CLI_HOSTS = {name for name, spec in eng.HOSTS.items() if not spec.qemu and spec.arch == "amd64"}


@pytest.fixture(params=sorted(CLI_HOSTS), ids=str)
def cli_host(request, zr_host_pool):
    from zrunbook import clidriver

    host = zr_host_pool.start(request.param, "-v", f"{clidriver.folder()}:{clidriver.IN_CONTAINER}:ro")
    try:
        yield host
    finally:
        zr_host_pool.remove(host)
