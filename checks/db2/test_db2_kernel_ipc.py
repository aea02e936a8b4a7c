"""The IPC sysctl snippets, loaded for real with sysctl -p in a fresh IPC namespace (see conftest.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from checks.hosts.steps import snippet_path
from zrunbook.db2 import ipc

LOAD = "db2/kernel/load-ipc-sysctl.sh"
KEYS = sorted({m.sysctl for m in ipc.minimums()})
BAD = Path(__file__).resolve().parent / "bad"


def effective(host, setup: str = "true") -> dict[str, int]:
    """Parameter values in a fresh IPC namespace after running setup there."""
    result = host.zr_ipc(f"{setup} >&2 && sysctl {' '.join(KEYS)}")
    assert result.rc == 0, f"rc={result.rc}\n{result.stdout}\n{result.stderr}"
    values = {}
    for line in result.stdout.splitlines():
        key, _, value = line.partition("=")
        values[key.strip()] = " ".join(value.split())
    return ipc.parameter_values(values)


def load(conf_in_container: str) -> str:
    return f"SYSCTL_DIR=/tmp/sysctl.d bash {snippet_path(LOAD)} {shlex.quote(conf_in_container)}"


@pytest.mark.uses("db2/kernel/90-db2-ipc-2013-sles11.conf", "db2/kernel/90-db2-ipc.conf")
def test_ipc_snippets_set_only_ipc_namespaced_keys():
    for rel in (ipc.CURRENT_CONF, ipc.STUDY_CONF):
        assert set(ipc.conf_values(rel)) <= ipc.IPC_NAMESPACED, rel


@pytest.mark.snippet(ipc.CURRENT_CONF, LOAD, checker="sysctl-applied")
def test_loading_the_current_snippet_meets_db2s_minimums_for_its_stated_memory(ipc_host):
    ram = ipc.stated_ram_gb(ipc.CURRENT_CONF)
    after = effective(ipc_host, load(snippet_path(ipc.CURRENT_CONF)))
    assert ipc.shortfalls(after, ram) == []
    assert {p: after[p] for p in ipc.parameter_values(ipc.conf_values(ipc.CURRENT_CONF))} == \
        ipc.parameter_values(ipc.conf_values(ipc.CURRENT_CONF))


@pytest.mark.snippet(ipc.CURRENT_CONF, checker="sysctl-applied")
def test_current_snippet_sets_what_the_kernel_lacks_and_lowers_nothing(ipc_host):
    ram = ipc.stated_ram_gb(ipc.CURRENT_CONF)
    defaults = effective(ipc_host)
    wanted = ipc.parameter_values(ipc.conf_values(ipc.CURRENT_CONF))
    for m in ipc.minimums():
        if defaults[m.parameter] < m.value(ram):
            assert m.parameter in wanted, f"{m.parameter}: default {defaults[m.parameter]} < {m.value(ram)}"
        if m.parameter in wanted:
            assert wanted[m.parameter] >= defaults[m.parameter], f"{m.parameter} would be lowered"


@pytest.mark.snippet(ipc.CURRENT_CONF, checker="sysctl-applied")
def test_kernel_defaults_in_the_facts_table_match_a_fresh_ipc_namespace(ipc_host):
    assert effective(ipc_host) == {m.parameter: m.kernel_default for m in ipc.minimums()}


@pytest.mark.snippet(ipc.STUDY_CONF, LOAD, checker="sysctl-applied")
def test_2013_snippet_meets_the_minimums_for_8_gb_but_lowers_todays_shmmax(ipc_host):
    after = effective(ipc_host, load(snippet_path(ipc.STUDY_CONF)))
    assert ipc.shortfalls(after, ipc.stated_ram_gb(ipc.STUDY_CONF)) == []
    defaults = {m.parameter: m.kernel_default for m in ipc.minimums()}
    assert after["SHMMAX"] < defaults["SHMMAX"]
    assert after["SEMMSL"] < defaults["SEMMSL"]


@pytest.mark.negative("db2/kernel/load-ipc-sysctl.sh", expects="SHMMNI and MSGMNI are named as short of the minimum")
@pytest.mark.snippet(ipc.CURRENT_CONF, LOAD, checker="sysctl-applied")
def test_check_rejects_a_snippet_computed_for_less_memory(ipc_host):
    text = (BAD / "ipc-below-minimum-32gb.conf").read_text()
    setup = f"printf %s {shlex.quote(text)} > /tmp/bad.conf && {load('/tmp/bad.conf')}"
    problems = ipc.shortfalls(effective(ipc_host, setup), ipc.stated_ram_gb(ipc.CURRENT_CONF))
    assert [p.split()[0] for p in problems] == ["SHMMNI", "MSGMNI"]


@pytest.mark.negative(invariant="the sysctl-applied stand-in keeps loaded values inside its IPC namespace",
                      expects="sysctl -w vm.swappiness is refused and the host's values are unchanged")
@pytest.mark.snippet(ipc.CURRENT_CONF, LOAD, checker="sysctl-applied")
def test_loaded_values_stay_in_their_namespace_and_global_keys_are_refused(ipc_host):
    outside = {k: Path(f"/proc/sys/{k.replace('.', '/')}").read_text() for k in KEYS}
    result = ipc_host.zr_ipc(f"{load(snippet_path(ipc.CURRENT_CONF))} && sysctl -w vm.swappiness=1")
    assert result.rc != 0, "setting vm.swappiness must be refused"
    assert "vm.swappiness" in result.stderr, result.stderr
    assert {k: Path(f"/proc/sys/{k.replace('.', '/')}").read_text() for k in KEYS} == outside
    assert effective(ipc_host) == {m.parameter: m.kernel_default for m in ipc.minimums()}


@pytest.mark.negative("db2/kernel/load-ipc-sysctl.sh", expects="run without root the step stops: run this as root")
@pytest.mark.snippet(LOAD, checker="testinfra")
def test_load_snippet_refuses_to_run_without_root(ipc_host):
    result = ipc_host.run(load(snippet_path(ipc.CURRENT_CONF)))
    assert result.rc == 1, result.stderr
    assert "run this as root" in result.stderr, result.stderr


@pytest.mark.negative(invariant="the facts table's kernel maximums are the kernel's",
                      expects="sysctl -w of each maximum + 1 is refused")
@pytest.mark.snippet(ipc.CURRENT_CONF, checker="sysctl-applied")
def test_kernel_refuses_identifier_counts_above_the_maximum_in_the_facts_table(ipc_host):
    for m in ipc.minimums():
        if m.kernel_max is None or m.field:
            continue
        ok = ipc_host.zr_ipc(f"sysctl -w {m.sysctl}={m.kernel_max}")
        refused = ipc_host.zr_ipc(f"sysctl -w {m.sysctl}={m.kernel_max + 1}")
        assert ok.rc == 0, (m.sysctl, ok.stderr)
        assert refused.rc != 0, (m.sysctl, refused.stderr)
    assert ipc.largest_ram_gb_within_kernel_limits() >= ipc.stated_ram_gb(ipc.CURRENT_CONF)
