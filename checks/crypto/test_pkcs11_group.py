"""Adding a service user to openCryptoki's pkcs11 group keeps the user's other groups.

The 2013 study's ``usermod -G pkcs11 wasadmin`` replaces the supplementary groups; the snippet appends.
The negative case runs the study's line on a fresh host and shows a group lost.
"""

import shlex
from pathlib import Path

import pytest

from checks.hosts.steps import run_snippet

SNIPPET = "crypto/pkcs11-group/add-user-to-pkcs11-group.sh"
STUDY_USERMOD = Path(__file__).parent / "bad" / "usermod-replaces-groups.sh"


def groups(host, user: str) -> set[str]:
    return set(host.check_output(f"id -nG {user}").split())


def make_wasadmin(host) -> None:
    host.run_expect([0], "useradd -m -G users,audio wasadmin")


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_user_is_in_pkcs11_and_keeps_its_other_groups(fresh_host):
    make_wasadmin(fresh_host)
    result = run_snippet(fresh_host, SNIPPET, "wasadmin")
    assert result.rc == 0, result.stderr
    assert groups(fresh_host, "wasadmin") >= {"wasadmin", "users", "audio", "pkcs11"}
    assert "pkcs11" in result.stdout.splitlines()[-1]


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_adding_the_user_twice_changes_nothing(fresh_host):
    make_wasadmin(fresh_host)
    run_snippet(fresh_host, SNIPPET, "wasadmin")
    before = fresh_host.file("/etc/group").content_string
    result = run_snippet(fresh_host, SNIPPET, "wasadmin")
    assert result.rc == 0, result.stderr
    assert "already in pkcs11" in result.stdout
    assert fresh_host.file("/etc/group").content_string == before


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_service_user_can_come_from_the_environment(fresh_host):
    result = fresh_host.run(f"SERVICE_USER=nobody bash /snippets/{SNIPPET}")
    assert result.rc == 0, result.stderr
    assert "pkcs11" in groups(fresh_host, "nobody")


@pytest.mark.negative("crypto/pkcs11-group/add-user-to-pkcs11-group.sh",
                      expects="a user that does not exist stops the step with a sentence")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_missing_user_stops_with_a_sentence(host):
    result = run_snippet(host, SNIPPET, "no-such-user")
    assert result.rc == 1
    assert "User 'no-such-user' does not exist" in result.stderr


@pytest.mark.negative("crypto/pkcs11-group/add-user-to-pkcs11-group.sh",
                      expects="a missing pkcs11 group stops the step with a sentence")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_missing_pkcs11_group_stops_with_a_sentence(fresh_host):
    fresh_host.run_expect([0], "groupdel -f pkcs11")
    result = run_snippet(fresh_host, SNIPPET, "nobody")
    assert result.rc == 1
    assert "Group pkcs11 does not exist" in result.stderr


def test_the_studys_usermod_drops_the_users_other_groups(fresh_host):
    """Negative case: the same check that passes the snippet catches the study's line."""
    make_wasadmin(fresh_host)
    fresh_host.run_expect([0], "bash -c " + shlex.quote(STUDY_USERMOD.read_text(encoding="utf-8")))
    after = groups(fresh_host, "wasadmin")
    assert "pkcs11" in after
    assert not after >= {"users", "audio"}, "the study's usermod -G kept the other groups after all"
