"""The observed inputs (checks/observe.py) record what a test really read, and only that.

Each test makes a recorder of its own beside the run's (audit hooks add up; a recorder records only between its
``begin`` and ``end``), so it can look at what was recorded without the run's plugin in the way."""

import subprocess

import pytest

from checks import observe
from checks.hosts import engine as eng
from zrunbook import facts


@pytest.mark.negative(invariant="the observer records what a test read and nothing else",
                      expects="reads before begin, after end and of other files are not recorded")
@pytest.mark.uses("crypto/token/init-token.sh", "crypto/token/pkcsconf-t.after.out")
def test_a_snippet_a_facts_table_and_a_negative_case_read_in_this_process_are_recorded_and_nothing_else():
    rec = observe.Recorder()
    (observe.SNIPPETS / "crypto/token/init-token.sh").read_text()  # never read before begin: not recorded
    rec.begin()
    (observe.SNIPPETS / "crypto/token/init-token.sh").read_bytes()
    facts.rows(observe.FACTS / "crypto" / "tls-policy.csv")
    (observe.CHECKS / "static" / "bad").iterdir()  # a folder listed, no file opened: not recorded
    next((observe.CHECKS / "static" / "bad").glob("*.sh")).read_text()
    (observe.REPO / "README.md").read_text()  # not an input kind
    read = rec.end()
    (observe.SNIPPETS / "crypto/token/pkcsconf-t.after.out").read_text()  # after end: not recorded
    assert read["snippets"] == ["crypto/token/init-token.sh"]
    assert read["facts"] == ["crypto/tls-policy.csv"]
    assert len(read["bad"]) == 1
    assert read["bad"][0].startswith("static/bad/")


@pytest.mark.uses("crypto/token/init-token.sh")
def test_a_file_a_subprocess_is_given_on_its_command_line_is_recorded():
    rec = observe.Recorder()
    rec.begin()
    subprocess.run(["true", "snippets/crypto/token/init-token.sh", str(observe.SNIPPETS / "nonexistent.sh")],
                   cwd=observe.REPO, check=True)
    assert rec.end()["snippets"] == ["crypto/token/init-token.sh"]  # relative to its cwd; a missing file is not


@pytest.mark.uses("crypto/token/init-token.sh", "crypto/token/pkcsconf-t.after.out")
def test_what_a_container_opens_under_snippets_is_recorded_however_the_command_names_it(fresh_host):
    """The command never spells the path (a variable, a glob): the fanotify mark sees the open, not the text. What
    the container read before begin is no test's."""
    rec = observe.Recorder()
    pid = int(eng.Engine.detect().run("inspect", "-f", "{{.State.Pid}}", fresh_host.zr_container).stdout)
    rec.watch(fresh_host.zr_container, pid)
    try:
        fresh_host.run_expect([0], "cat /snippets/crypto/token/pkcsconf-t.after.out >/dev/null")  # before begin
        rec.begin()
        fresh_host.run_expect([0], 'd=/snippets/crypto; cat "$d"/token/init-tok*.sh >/dev/null; ls /snippets/ihs')
        read = rec.end()
    finally:
        rec.forget(fresh_host.zr_container)
    assert read["snippets"] == ["crypto/token/init-token.sh"]


def test_observation_that_cannot_start_says_so_in_a_sentence():
    rec = observe.Recorder()
    with pytest.raises(observe.ObserveError, match=r"Cannot observe what the tests read in container nowhere: "
                                                   r"\[Errno 2\].*/proc/999999999/ns/mnt.*run make check as root"):
        rec.watch("nowhere", 999999999)
