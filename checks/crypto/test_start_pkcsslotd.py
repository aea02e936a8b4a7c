"""Starting the slot daemon (snippets/crypto/opencryptoki/start-pkcsslotd.sh) in a container host.

Containers have no systemd, so the snippet's container branch runs here; the systemd branch is one
``systemctl enable --now`` and is shellchecked only.
"""

import shlex

import pytest

from checks.hosts import amd64_only
from checks.hosts.steps import run_snippet, snippet_path

SNIPPET = "crypto/opencryptoki/start-pkcsslotd.sh"
TOKEN_SLOT = {"debian13-amd64": "3", "debian13-s390x": "1"}  # soft token, ICA token


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_pkcsslotd_runs_with_its_socket_and_lists_the_token_slot(fresh_host):
    result = run_snippet(fresh_host, SNIPPET)
    assert result.rc == 0, result.stderr
    assert fresh_host.process.filter(comm="pkcsslotd")
    assert fresh_host.file("/run/opencryptoki/pkcsslotd.socket").is_socket
    assert f"Slot #{TOKEN_SLOT[fresh_host.zr_name]} Info" in result.stdout


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_the_step_asks_the_daemon_as_zrprobe_never_as_root(fresh_host):
    """Review 2026-12 H-1: root starts the daemon, but every pkcsconf the step runs (which loads openCryptoki and with
    it every token's NVTOK.DAT) runs as zrprobe (group pkcs11 only); a pkcsconf ahead on PATH logs who ran it."""
    shim = '#!/bin/sh\necho "$(id -u) $(id -g) $(id -G)" >> /tmp/zr-ids/log\nexec /usr/sbin/pkcsconf "$@"\n'
    fresh_host.run_expect([0], f"mkdir -p /tmp/zr-ids && chmod 777 /tmp/zr-ids && printf %s {shlex.quote(shim)} "
                               "> /tmp/zr-ids/pkcsconf && chmod 755 /tmp/zr-ids/pkcsconf")
    result = fresh_host.run(f"PATH=/tmp/zr-ids:$PATH bash {snippet_path(SNIPPET)}")
    assert result.rc == 0, result.stdout + result.stderr
    assert f"Slot #{TOKEN_SLOT[fresh_host.zr_name]} Info" in result.stdout
    probe = fresh_host.check_output("id -u zrprobe")
    pkcs11 = fresh_host.check_output("getent group pkcs11 | cut -d: -f3")
    seen = fresh_host.check_output("cat /tmp/zr-ids/log").splitlines()
    assert seen, "no pkcsconf ran"
    assert set(seen) == {f"{probe} {pkcs11} {pkcs11}"}, seen


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_starting_pkcsslotd_twice_keeps_one_daemon(fresh_host):
    run_snippet(fresh_host, SNIPPET)
    result = run_snippet(fresh_host, SNIPPET)
    assert result.rc == 0, result.stderr
    assert len(fresh_host.process.filter(comm="pkcsslotd")) == 1


@pytest.mark.negative("crypto/opencryptoki/start-pkcsslotd.sh",
                      expects="run as a user the step stops: Run this as root")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_start_pkcsslotd_as_a_user_stops_with_a_sentence(host):
    result = host.run(f"su -s /bin/bash nobody -c 'bash /snippets/{SNIPPET}'")
    assert result.rc == 1
    assert "Run this as root" in result.stderr


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


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_shell_without_the_pkcs11_group_is_told_to_log_in_again(fresh_host):
    """The reader's root shell predated the install, so it lacked the group the package had just given root,
    and pkcsconf failed with CKR_HOST_MEMORY after the snippet said the daemon was running (issue 17)."""
    result = fresh_host.run(f"setpriv --clear-groups bash /snippets/{SNIPPET}")
    assert result.rc == 1, result.stdout + result.stderr
    assert "not in the pkcs11 group yet" in result.stderr
    assert "is running" not in result.stdout


# A second soft-token slot, as the service-token step appends one (here with the soft token's library).
NEW_SLOT = "\nslot 5\n{\nstdll = libpkcs11_sw.so\ntokname = swtok-restart\n}\n"


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_restart_makes_a_running_daemon_read_a_changed_configuration(fresh_host):
    """The page's route after a change to opencryptoki.conf: a plain start leaves the running daemon (and its old
    slot list) alone; 'restart' stops it by its PID and starts one that lists the new slot."""
    assert run_snippet(fresh_host, SNIPPET).rc == 0
    fresh_host.run_expect([0], f"printf '%s' '{NEW_SLOT}' >> /etc/opencryptoki/opencryptoki.conf")
    again = run_snippet(fresh_host, SNIPPET)
    assert again.rc == 0, again.stderr
    assert "Slot #5 Info" not in again.stdout  # the old daemon still serves the old list
    restarted = run_snippet(fresh_host, SNIPPET, "restart")
    assert restarted.rc == 0, restarted.stdout + restarted.stderr
    assert "Slot #5 Info" in restarted.stdout, restarted.stdout
    live = fresh_host.run("ps -C pkcsslotd -o stat= | grep -vc '^Z'").stdout.strip()
    assert live == "1", live


@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SUBREAPER)
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_restart_under_a_parent_that_never_reaps_starts_a_new_daemon_and_says_why_the_old_one_lingers(fresh_host):
    """A container without an init: the stopped daemon stays a zombie. The restart does not count it as running,
    starts a new daemon that answers, and says to start containers with an init."""
    # pkcsslotd started under a child subreaper that only sleeps (the doctor check's way to make a zombie)
    fresh_host.run_expect([0], "systemd-tmpfiles --create /usr/lib/tmpfiles.d/opencryptoki.conf; "
                               "python3 -c 'import ctypes, subprocess, time; ctypes.CDLL(None).prctl(36, 1, 0, 0, 0); "
                               "subprocess.run([\"pkcsslotd\"]); time.sleep(600)' >/dev/null 2>&1 & "
                               "for i in $(seq 60); do pkcsconf -s >/dev/null 2>&1 && exit 0; sleep 0.5; done; exit 1")
    restarted = run_snippet(fresh_host, SNIPPET, "restart")
    assert restarted.rc == 0, restarted.stdout + restarted.stderr
    assert "a zombie" in restarted.stderr, restarted.stderr
    assert "docker run --init" in restarted.stderr
    assert fresh_host.run("pkcsconf -s").rc == 0
    states = fresh_host.run("ps -C pkcsslotd -o stat=").stdout.split()
    assert sum(not s.startswith("Z") for s in states) == 1, states
    assert any(s.startswith("Z") for s in states), states
