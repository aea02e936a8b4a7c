"""Starting the slot daemon (snippets/crypto/opencryptoki/start-pkcsslotd.sh) in a container host.

Containers have no systemd, so the snippet's container branch runs here; the systemd branch is one
``systemctl enable --now`` and is shellchecked only.
"""

import pytest

from zrunbook.hosts.steps import run_snippet

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
