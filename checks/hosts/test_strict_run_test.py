"""On the runbook's container hosts run_test means exit status 0 (zrunbook.hosts.util.strict_run_test, applied
to every host checks/hosts/plugin.py starts). testinfra's own run_test also accepts 1: the negative case."""

import pytest
from testinfra.backend import get_backend
from testinfra.host import Host

from zrunbook.hosts.util import strict_run_test


def local_host():
    """A new local host each time (testinfra.get_host caches hosts; strict_run_test changes one)."""
    return Host(get_backend("local://"))


def test_testinfra_run_test_lets_exit_status_1_pass():
    assert local_host().run_test("exit 1").rc == 1


def test_strict_run_test_fails_on_exit_status_1():
    host = local_host()
    strict_run_test(host)
    assert host.run_test("true").rc == 0
    with pytest.raises(AssertionError):
        host.run_test("exit 1")
