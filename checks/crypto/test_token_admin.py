"""Token administration without root on openCryptoki 3.23 (Debian 13): root starts pkcsslotd and opens the
token folders to the pkcs11 group once; a token-admin user in pkcs11 (not root) then initialises the token
and sets its PINs. openCryptoki 3.24 and later add pkcstok_admin and a per-token usergroup; the hosts run
3.23, which has neither, so those are not run here."""

import pytest

from checks.hosts.steps import run_snippet, snippet_path, start_pkcsslotd
from checks.hosts.token import INIT, init_token, slot_of, token_env
from checks.hosts.util import output
from zrunbook.crypto import token_flags

OPEN = "crypto/token/let-pkcs11-group-store-keys.sh"
ADMIN = "tokenadmin"


def as_admin(host, command: str):
    return host.run(f"runuser -u {ADMIN} -- env {command}")


@pytest.mark.uses("crypto/token/let-pkcs11-group-store-keys.sh")
@pytest.mark.snippet(INIT, checker="testinfra")
def test_a_pkcs11_member_initialises_the_token_without_root(fresh_host):
    start_pkcsslotd(fresh_host)
    fresh_host.run_expect([0], f"useradd --system --no-create-home --groups pkcs11 {ADMIN}")
    opened = run_snippet(fresh_host, OPEN)
    assert opened.rc == 0, output(opened)
    r = as_admin(fresh_host, f"{token_env()} bash {snippet_path(INIT)}")
    assert r.rc == 0, output(r)
    info = fresh_host.check_output(f"pkcsconf -t -c {slot_of(fresh_host)}")
    assert token_flags.problems(token_flags.flags_in(info)) == [], info


@pytest.mark.snippet(INIT, checker="testinfra")
def test_a_user_outside_pkcs11_cannot_initialise_the_token(fresh_host):
    start_pkcsslotd(fresh_host)
    fresh_host.run_expect([0], f"useradd --system --no-create-home {ADMIN}")
    r = as_admin(fresh_host, f"{token_env()} bash {snippet_path(INIT)}")
    assert r.rc != 0, output(r)
    assert init_token(fresh_host).rc == 0  # root still can: the user, not the token, was the problem
