"""Token initialisation (snippets/crypto/token/init-token.sh) on both hosts, judged by the token flags.

amd64 initialises openCryptoki's soft token, s390x (qemu-user) the ICA token; the snippet finds the slot
itself. pkcsconf's exit status is not trusted: every outcome is read from ``pkcsconf -t`` flags and
judged by ``token_flags.problems`` (the rules in facts/crypto/token-flags.csv). The PINs are the test set of
checks/hosts/token.py; the wrong ones below are overrides of it.
"""

import shlex
from pathlib import Path

import pytest

from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.token import INIT as SNIPPET
from checks.hosts.token import LABEL, PINS, init_token, slot_of, token_env
from checks.hosts.util import output as said
from zrunbook.crypto import token_flags

SKIPS_USER_PIN = Path(__file__).parent / "bad" / "init-token-without-user-pin.sh"

FACTORY_SO_PIN = "87654321"  # openCryptoki's documented default, test data only
# Other PINs below are deliberate overrides of the one test set (checks/hosts/token.py PINS): wrong ones.
WRONG_PIN = "11119999"


def flags(host) -> int:
    return token_flags.flags_in(host.check_output(f"pkcsconf -t -c {slot_of(host)}"))


def leave_token_without_user_pin(host) -> None:
    """Run the bad init (checks/crypto/bad/init-token-without-user-pin.sh): label and SO PIN only."""
    script = shlex.quote(SKIPS_USER_PIN.read_text(encoding="utf-8"))
    host.run_expect([0], f"{token_env(TOKEN_SLOT=slot_of(host), TOKEN_INITIAL_SO_PIN=FACTORY_SO_PIN)} bash -c {script}")


@pytest.mark.arch_dependent("the ICA token (libica) on s390x, the soft token elsewhere")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_init_token_leaves_a_ready_token_with_no_pin_to_be_changed(fresh_host):
    start_pkcsslotd(fresh_host)
    assert token_flags.problems(flags(fresh_host)), "the token was ready before initialisation"
    result = init_token(fresh_host)
    assert result.rc == 0, said(result)
    assert token_flags.problems(flags(fresh_host)) == [], said(result)
    info = fresh_host.check_output(f"pkcsconf -t -c {slot_of(fresh_host)}")
    assert f"Label: {LABEL}" in info
    assert "Token ready" in result.stdout


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_init_token_run_twice_changes_nothing(fresh_host):
    start_pkcsslotd(fresh_host)
    init_token(fresh_host)
    before = flags(fresh_host)
    result = init_token(fresh_host, TOKEN_SLOT=slot_of(fresh_host))
    assert result.rc == 0, said(result)
    assert "nothing changed" in result.stdout
    assert flags(fresh_host) == before


@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="the step refuses to give an initialised token another label")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_init_token_refuses_to_relabel_an_initialised_token(fresh_host):
    start_pkcsslotd(fresh_host)
    init_token(fresh_host)
    result = init_token(fresh_host, "another")
    assert result.rc == 1, said(result)
    assert f"already initialised with the label '{LABEL}'" in result.stderr
    assert f"Label: {LABEL}" in fresh_host.check_output("pkcsconf -t")


@pytest.mark.negative("crypto/token/init-token.sh", expects="a wrong PIN for a ready token is named, not accepted")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
@pytest.mark.parametrize("who", ["USER", "SO"])
def test_a_wrong_pin_for_a_ready_token_is_named_not_accepted(fresh_host, who):
    """A ready token with the same label used to be left alone even when the PIN in the environment was wrong."""
    start_pkcsslotd(fresh_host)
    assert init_token(fresh_host).rc == 0
    result = init_token(fresh_host, **{f"TOKEN_{who}_PIN": WRONG_PIN})
    assert result.rc == 1, said(result)
    assert f"TOKEN_{who}_PIN does not log in to it (CKR_PIN_INCORRECT)" in result.stderr
    assert "a wrong " + ("user" if who == "USER" else "SO") + " PIN was entered" in result.stderr


def test_flags_checker_catches_a_token_init_that_skips_the_user_pin(fresh_host):
    """Negative case: label and SO PIN set, no user PIN; pkcsconf says nothing is wrong, the flags do."""
    start_pkcsslotd(fresh_host)
    leave_token_without_user_pin(fresh_host)
    found = token_flags.problems(flags(fresh_host))
    assert any(p.startswith("CKF_USER_PIN_INITIALIZED is not set") for p in found), found


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_init_token_finishes_a_token_left_without_user_pin(fresh_host):
    start_pkcsslotd(fresh_host)
    leave_token_without_user_pin(fresh_host)
    result = init_token(fresh_host)
    assert result.rc == 0, said(result)
    assert "done: set the user PIN" in result.stdout
    assert token_flags.problems(flags(fresh_host)) == []


@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="a wrong initial SO PIN stops the step, which says the token is not initialised")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_wrong_initial_so_pin_stops_and_says_the_token_is_not_initialised(fresh_host):
    start_pkcsslotd(fresh_host)
    result = init_token(fresh_host, TOKEN_INITIAL_SO_PIN=WRONG_PIN)  # not the factory SO PIN
    assert result.rc == 1, said(result)
    assert "Failed to initialise the token" in result.stderr
    assert "not initialised" in result.stderr
    assert not flags(fresh_host) & 0x400


@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="the factory SO PIN given as the new one stops the step before anything changes")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_the_factory_so_pin_as_the_new_one_stops_before_anything_changes(fresh_host):
    """The reader's stumble: pkcsconf refused it with CKR_PIN_INVALID after the token was initialised."""
    start_pkcsslotd(fresh_host)
    before = flags(fresh_host)
    result = init_token(fresh_host, TOKEN_SO_PIN=FACTORY_SO_PIN)
    assert result.rc == 1, said(result)
    assert "TOKEN_SO_PIN is the factory SO PIN" in result.stderr
    assert "Nothing was changed" in result.stderr
    assert flags(fresh_host) == before


@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="a wrong SO PIN stops the step before the user PIN, and it says so")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_wrong_so_pin_stops_before_the_user_pin_and_says_so(fresh_host):
    start_pkcsslotd(fresh_host)
    leave_token_without_user_pin(fresh_host)
    result = init_token(fresh_host, TOKEN_SO_PIN=WRONG_PIN)  # not the SO PIN the token has now
    assert result.rc == 1, said(result)
    assert "Failed to set the user PIN" in result.stderr
    assert "no user PIN" in result.stderr
    assert "a wrong SO PIN was entered" in result.stderr


@pytest.mark.negative("crypto/token/init-token.sh", expects="a slot that does not exist stops the step with a sentence")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_missing_slot_stops_with_a_sentence(fresh_host):
    start_pkcsslotd(fresh_host)
    result = init_token(fresh_host, TOKEN_SLOT="9")
    assert result.rc == 1, said(result)
    assert "Slot 9 does not exist" in result.stderr


@pytest.mark.negative("crypto/token/init-token.sh", expects="a slot without a token stops the step with a sentence")
@pytest.mark.only_hosts("debian13-amd64", why="slot 1 is the ICA slot, which holds a token on s390x")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_slot_without_a_token_stops_with_a_sentence(fresh_host):
    start_pkcsslotd(fresh_host)
    result = init_token(fresh_host, TOKEN_SLOT="1")  # the ICA slot: its library cannot load on amd64
    assert result.rc == 1, said(result)
    assert "Slot 1 has no token present" in result.stderr


@pytest.mark.negative("crypto/token/init-token.sh", expects="the step stops when pkcsslotd is not running")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_init_token_stops_when_pkcsslotd_is_not_running(fresh_host):
    result = init_token(fresh_host)
    assert result.rc == 1, said(result)
    assert "pkcsslotd is not running" in result.stderr


@pytest.mark.negative("crypto/token/init-token.sh", expects="a PIN of the wrong length changes nothing")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_pin_of_the_wrong_length_changes_nothing(fresh_host):
    start_pkcsslotd(fresh_host)
    before = flags(fresh_host)
    result = init_token(fresh_host, TOKEN_USER_PIN="12")  # too short on purpose
    assert result.rc == 1, said(result)
    assert "takes PINs of 4 to 8" in result.stderr
    assert flags(fresh_host) == before


@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="a PIN left unset stops the step before it touches the token")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_missing_pin_stops_before_touching_the_token(host):
    result = host.run(f"TOKEN_LABEL=x TOKEN_SO_PIN={PINS['TOKEN_SO_PIN']} bash {snippet_path(SNIPPET)}")
    assert result.rc != 0
    assert "set TOKEN_USER_PIN" in result.stderr


@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="with a p11sak older than 3.22 the step stops before changing anything")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_init_token_stops_before_changing_anything_with_a_p11sak_older_than_3_22(fresh_host):
    # openCryptoki 3.22 added p11sak's SO login (ChangeLog, "+ openCryptoki 3.22"). A stand-in p11sak whose help
    # lacks --so, as 3.21's does, first on PATH: the script must refuse before initialising the token.
    start_pkcsslotd(fresh_host)
    before = flags(fresh_host)
    fresh_host.run_expect([0], "mkdir -p /tmp/old-p11sak && printf '%s\\n' '#!/bin/sh' "
                          "'echo \"Usage: p11sak list-key [ARGS] [OPTIONS]\"; echo \"  -s, --slot SLOT\"' "
                          "> /tmp/old-p11sak/p11sak && chmod +x /tmp/old-p11sak/p11sak")
    result = fresh_host.run(f"PATH=/tmp/old-p11sak:$PATH {token_env()} bash {snippet_path(SNIPPET)}")
    assert result.rc == 1, said(result)
    assert "needs openCryptoki 3.22 or later" in result.stderr
    assert "Nothing was changed" in result.stderr
    assert flags(fresh_host) == before
