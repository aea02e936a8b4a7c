"""The logind drop-in that keeps the Db2 instance owner's IPC at logout (docs/how-to/db2/02-kernel-ipc.md).

The step installs the drop-in and asks systemd's own reader of logind's files (systemd-analyze cat-config, which
reads them in logind's order) for the value that wins. The container hosts run no systemd-logind, so the restart
and the D-Bus property the page names for a real host are not reached here; the step says so.
"""

import pytest

from checks.hosts.steps import snippet_path
from checks.hosts.util import copy_to, output

STEP = "db2/kernel/keep-ipc-at-logout.sh"
DROP_IN = "db2/kernel/90-db2-keep-ipc.conf"
INSTALLED = "/etc/systemd/logind.conf.d/90-db2-keep-ipc.conf"


def keep_ipc(host, conf: str = snippet_path(DROP_IN)):
    return host.run(f"bash {snippet_path(STEP)} {conf}")


@pytest.mark.snippet(STEP, DROP_IN, checker="testinfra")
def test_logind_keeps_ipc_at_logout_after_the_step(fresh_host):
    before = fresh_host.run("systemd-analyze cat-config systemd/logind.conf")
    assert before.rc == 0, output(before)
    assert "\nRemoveIPC=no" not in before.stdout  # Debian's default: removed at logout
    r = keep_ipc(fresh_host)
    assert r.rc == 0, output(r)
    assert fresh_host.file(INSTALLED).mode == 0o644
    assert "RemoveIPC=no is in /etc/systemd/logind.conf.d" in r.stdout
    after = fresh_host.run("systemd-analyze cat-config systemd/logind.conf").stdout
    assert f"# {INSTALLED}" in after
    assert "\nRemoveIPC=no" in after
    again = keep_ipc(fresh_host)  # safe to run twice
    assert again.rc == 0, output(again)


@pytest.mark.negative("db2/kernel/keep-ipc-at-logout.sh", "db2/kernel/90-db2-keep-ipc.conf",
                      expects="the step fails when a later file or a [Logind] section leaves RemoveIPC yes")
@pytest.mark.snippet(STEP, DROP_IN, checker="testinfra")
def test_keep_ipc_step_fails_when_a_later_file_or_another_section_wins(fresh_host):
    """Negative cases: a vendor drop-in read after ours sets RemoveIPC=yes again; the same line under a section
    logind does not read ([Logind]) leaves the default."""
    copy_to(fresh_host, "[Login]\nRemoveIPC=yes\n", "/usr/lib/systemd/logind.conf.d/99-vendor.conf")
    later = keep_ipc(fresh_host)
    assert later.rc == 1, output(later)
    assert "RemoveIPC is 'yes' after all of logind's files" in later.stderr
    fresh_host.run_expect([0], "rm /usr/lib/systemd/logind.conf.d/99-vendor.conf " + INSTALLED)
    copy_to(fresh_host, "[Logind]\nRemoveIPC=no\n", "/tmp/90-db2-keep-ipc.conf")
    wrong = keep_ipc(fresh_host, "/tmp/90-db2-keep-ipc.conf")
    assert wrong.rc == 1, output(wrong)
    assert "RemoveIPC is 'yes (the default)'" in wrong.stderr
