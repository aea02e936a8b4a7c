"""qeth buffer_count: chzdev's persistent rule (s390x host, where s390-tools run) and the 2013 rules form, both
checked with udevadm verify (systemd 257); the study's own lines are the negative cases.
"""

from pathlib import Path

import pytest

from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import copy_to, output
from zrunbook.shown_output import assert_shown_output

HERE = Path(__file__).resolve().parent

SET = "was/network/set-qeth-buffer-count.sh"
GENERATED = "was/network/41-qeth-0.0.8000.rules"
RULES_2013 = "was/network/51-qeth-0.0.8000-2013.rules"
IDS = "0.0.8000:0.0.8001:0.0.8002"
BAD = sorted(p.name for p in (HERE / "bad").glob("*.rules"))
WHY = {"51-qeth-0.0.2100-study-parentheses.rules": "Invalid key 'ATTR(buffer_count)'",
       "51-qeth-0.0.8000-study-split-line.rules": "stray trailing comma"}


def verify(host, path):
    return host.run(f"udevadm verify --no-style {path}")


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(SET, checker="testinfra")
@pytest.mark.snippet(GENERATED, checker="output-regenerated")
@pytest.mark.snippet(GENERATED, checker="udevadm-verify")
def test_chzdev_writes_a_valid_persistent_rule_with_128_buffers(fresh_host):
    first = run_snippet(fresh_host, SET, IDS, "128")
    assert first.rc == 0, output(first)
    assert "takes effect when the device is set up" in first.stdout, output(first)
    rule = "/etc/udev/rules.d/41-qeth-0.0.8000.rules"
    assert run_snippet(fresh_host, SET, IDS, "128").rc == 0  # safe to run twice
    result = verify(fresh_host, rule)
    assert result.rc == 0, output(result)
    text = fresh_host.file(rule).content_string
    assert 'ATTR{[ccwgroup/0.0.8000]buffer_count}="128"' in text
    assert text.index("buffer_count") < text.index('online}="1"'), "buffer_count must be set before online"
    assert_shown_output(GENERATED, text)


@pytest.mark.negative("was/network/set-qeth-buffer-count.sh",
                      expects="a buffer count outside 8..128 is refused (exit 2) and no rule is written")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(SET, checker="testinfra")
def test_buffer_count_outside_8_to_128_is_refused(fresh_host):
    result = run_snippet(fresh_host, SET, IDS, "256")
    assert result.rc == 2, output(result)
    assert "between 8 and 128" in result.stderr
    assert not fresh_host.file("/etc/udev/rules.d/41-qeth-0.0.8000.rules").exists


@pytest.mark.snippet(RULES_2013, checker="udevadm-verify")
def test_2013_rule_passes_udevadm_verify(host):
    result = verify(host, snippet_path(RULES_2013))
    assert result.rc == 0, output(result)


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.snippet(RULES_2013, checker="udevadm-verify")
def test_udevadm_verify_rejects_the_studys_rule(host, bad):
    copy_to(host, (HERE / "bad" / bad).read_text(), f"/tmp/udev-bad/{bad}")
    result = host.run(f"udevadm verify /tmp/udev-bad/{bad}")
    assert result.rc == 1, output(result)
    assert WHY[bad] in result.stderr, output(result)
