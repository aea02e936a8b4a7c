"""Starting the slot daemon (snippets/crypto/opencryptoki/start-pkcsslotd.sh) in a container host.

Containers have no systemd, so the snippet's container branch runs here; the systemd branch is one
``systemctl enable --now`` and is shellchecked only.
"""

import pytest

from checks.hosts.steps import run_snippet

SNIPPET = "crypto/opencryptoki/start-pkcsslotd.sh"
TOKEN_SLOT = {"debian13-amd64": "3", "debian13-s390x": "1"}  # soft token, ICA token


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_pkcsslotd_runs_with_its_socket_and_lists_the_token_slot(fresh_host):
    result = run_snippet(fresh_host, SNIPPET)
    assert result.rc == 0, result.stderr
    assert fresh_host.process.filter(comm="pkcsslotd")
    assert fresh_host.file("/run/opencryptoki/pkcsslotd.socket").is_socket
    assert f"Slot #{TOKEN_SLOT[fresh_host.zr_name]} Info" in result.stdout


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_starting_pkcsslotd_twice_keeps_one_daemon(fresh_host):
    run_snippet(fresh_host, SNIPPET)
    result = run_snippet(fresh_host, SNIPPET)
    assert result.rc == 0, result.stderr
    assert len(fresh_host.process.filter(comm="pkcsslotd")) == 1


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_start_pkcsslotd_as_a_user_stops_with_a_sentence(host):
    result = host.run(f"su -s /bin/bash nobody -c 'bash /snippets/{SNIPPET}'")
    assert result.rc == 1
    assert "Run this as root" in result.stderr


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_pkcsslotd_starts_without_pgrep_and_systemd_tmpfiles(fresh_host):
    """A clean Debian has neither (procps and systemd are not in a minimal system): the reader's first run
    failed with exit 127 (issue 17). The snippet must need neither."""
    fresh_host.run_expect([0], "rm /usr/bin/pgrep /usr/bin/systemd-tmpfiles")
    result = run_snippet(fresh_host, SNIPPET)
    assert result.rc == 0, result.stdout + result.stderr
    assert "command not found" not in result.stderr
    assert fresh_host.file("/run/opencryptoki").group == "pkcs11"
    assert f"Slot #{TOKEN_SLOT[fresh_host.zr_name]} Info" in result.stdout


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_daemon_that_does_not_answer_is_not_reported_as_running(fresh_host):
    """The reader saw "pkcsslotd is running" while pkcsconf -s failed: the snippet now asks the daemon itself.
    Here pkcsslotd is replaced by a program that exits at once, so nothing ever answers."""
    stub = "/usr/local/sbin/pkcsslotd"
    fresh_host.run_expect([0], f"printf '#!/bin/sh\\nexit 0\\n' > {stub} && chmod +x {stub}")
    result = fresh_host.run(f"PATH=/usr/local/sbin:$PATH bash /snippets/{SNIPPET}")
    assert result.rc == 1, result.stdout + result.stderr
    assert "is running" not in result.stdout
    assert "did not come up, or does not answer" in result.stderr


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_shell_without_the_pkcs11_group_is_told_to_log_in_again(fresh_host):
    """The reader's root shell predated the install, so it lacked the group the package had just given root,
    and pkcsconf failed with CKR_HOST_MEMORY after the snippet said the daemon was running (issue 17)."""
    result = fresh_host.run(f"setpriv --clear-groups bash /snippets/{SNIPPET}")
    assert result.rc == 1, result.stdout + result.stderr
    assert "not in the pkcs11 group yet" in result.stderr
    assert "is running" not in result.stdout
