"""What every container host gives a check: its architecture, no network, the snippets read-only."""

import pytest

from checks.hosts.steps import snippet_path

ARCH = {"debian13-amd64": "x86_64", "debian13-s390x": "s390x"}


@pytest.mark.arch_dependent("it checks the architecture itself")
def test_the_host_runs_debian_13_on_its_architecture(host):
    assert host.system_info.distribution == "debian"
    assert host.system_info.release.startswith("13")
    assert host.system_info.arch == ARCH[host.zr_name]


def test_the_container_has_no_network_but_loopback(host):
    links = host.run("ip -o link show").stdout
    assert [line.split(":")[1].strip() for line in links.splitlines()] == ["lo"]


def test_the_snippets_are_mounted_read_only(host):
    path = snippet_path("crypto/packages/verify-packages.sh")
    assert host.file(path).is_file
    write = host.run(f"touch {path}")
    assert write.rc != 0
    assert "Read-only file system" in write.stderr


def test_a_fresh_host_starts_from_the_image_not_from_the_shared_container(fresh_host, zr_host_pool):
    host = zr_host_pool.shared(fresh_host.zr_name)
    assert fresh_host.zr_container != host.zr_container
    host.run_expect([0], "touch /tmp/zr-written-on-shared")
    assert not fresh_host.file("/tmp/zr-written-on-shared").exists
    host.run_expect([0], "rm /tmp/zr-written-on-shared")
