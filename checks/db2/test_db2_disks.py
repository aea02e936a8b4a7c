"""HyperPAV alias snippets: udev rules through udevadm verify, the commands' preconditions, the recorded lsdasd."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from checks.hosts.steps import run_snippet, snippet_path
from zrunbook import SNIPPETS
from zrunbook.formats import lsdasd

RULES = "db2/disks/41-dasd-eckd-hyperpav-aliases.rules"
CHZDEV = "db2/disks/enable-hyperpav-aliases.sh"
CHCCWDEV = "db2/disks/enable-hyperpav-aliases-2013.sh"
LSDASD = "db2/disks/lsdasd-s-hyperpav.out"
HERE = Path(__file__).resolve().parent


def verify(host, path: str):
    return host.run(f"udevadm verify --resolve-names=never {path}")


@pytest.mark.snippet(RULES, checker="udevadm-verify")
def test_udevadm_verify_accepts_the_hyperpav_alias_rules(host):
    result = verify(host, snippet_path(RULES))
    assert result.rc == 0, result.stdout + result.stderr


@pytest.mark.snippet(RULES, checker="udevadm-verify")
@pytest.mark.parametrize(("bad", "message"), [
    ("dasd-alias-rule-split-across-lines.rules", "The line has no effect"),
    ("dasd-alias-rule-parenthesised-attr.rules", "Invalid key 'ATTR(online)'"),
])
def test_udevadm_verify_rejects_a_broken_alias_rule(host, bad, message):
    text = (HERE / "bad" / bad).read_text()
    result = host.run(f"printf %s {shlex.quote(text)} > /tmp/{bad} && udevadm verify --resolve-names=never /tmp/{bad}")
    assert result.rc == 1, result.stdout + result.stderr
    assert message in result.stderr


@pytest.mark.arch_dependent("chzdev and the DASD tools are s390-tools")
@pytest.mark.snippet(CHZDEV, CHCCWDEV, checker="testinfra")
@pytest.mark.parametrize("rel", [CHZDEV, CHCCWDEV])
def test_alias_snippets_stop_with_a_plain_sentence_where_the_devices_are_missing(fresh_host, rel):
    result = run_snippet(fresh_host, rel)
    assert result.rc == 1, result.stdout + result.stderr
    wanted = "device 0.0.71fa not found" if fresh_host.zr_name == "debian13-s390x" else "not found: install s390-tools"
    assert wanted in result.stderr


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(CHZDEV, checker="testinfra")
def test_chzdev_on_s390x_knows_the_dasd_eckd_type_the_snippet_names(host):
    result = host.run("chzdev --list-types")
    assert result.rc == 0, result.stderr
    assert "dasd-eckd" in result.stdout


@pytest.mark.snippet(LSDASD, checker="recorded-on-ibm-z")
def test_recorded_lsdasd_shows_four_aliases_and_a_consistent_base_volume():
    rows = lsdasd.parse((SNIPPETS / LSDASD).read_text())
    assert [d.bus_id for d in rows if d.status == "alias"] == ["71fa", "71fb", "71fc", "71fd"]
    assert lsdasd.problems(rows) == []


@pytest.mark.negative("db2/disks/lsdasd-s-hyperpav.out",
                      expects="a block count that is not a whole number of 3390 cylinders is named")
@pytest.mark.snippet(LSDASD, checker="recorded-on-ibm-z")
def test_lsdasd_check_rejects_a_block_count_that_is_not_whole_cylinders():
    rows = lsdasd.parse((HERE / "bad" / "lsdasd-s-blocks-do-not-match-size.out").read_text())
    assert lsdasd.problems(rows) == ["7111: 5409181 blocks is not a whole number of 3390 cylinders"]
