"""Opening the token folders to the pkcs11 group (snippets/crypto/token/let-pkcs11-group-store-keys.sh).

Debian 13's openCryptoki 3.23 creates /var/lib/opencryptoki/{swtok,lite,...} as root:root 0755, so a
pkcs11 member such as wasadmin can log in but cannot store a key (CKR_FUNCTION_FAILED). The first test
shows that failure on the untouched host and its cure by the snippet; the others assert the state.
"""

import pytest

from checks.hosts.steps import State, arch, run_snippet, start_pkcsslotd
from checks.hosts.token import OPEN_STORE as SNIPPET
from checks.hosts.token import PINS, ready_token
from checks.hosts.util import output as said

TOKEN_DIR = {"amd64": "/var/lib/opencryptoki/swtok", "s390x": "/var/lib/opencryptoki/lite"}  # by architecture


def ready_token_and_member(host) -> str:
    """The token ready and wasadmin in pkcs11, the token folders left as openCryptoki made them (the step
    under test not yet taken); returns the slot."""
    return ready_token(host, "wasadmin", open_store=False).slot


def store_key_as_wasadmin(host, slot: str, label: str):
    """wasadmin generates an AES key as a token object (the user PIN comes from the environment)."""
    return host.run(
        f"su wasadmin -s /bin/bash -c 'PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} "
        f"p11sak generate-key aes 256 --slot {slot} --label {label}'"
    )


# ready_token_and_member made once and kept as an image (checks/hosts/plugin.py State): the folders are
# still as openCryptoki made them, so the first test below still sees the failure the snippet cures.
TOKEN_MEMBER = State("crypto-token-member", ready_token_and_member, snippets=("crypto",))


@pytest.mark.arch_dependent("the ICA token's store on s390x, the soft token's elsewhere")
@pytest.mark.from_state(TOKEN_MEMBER)
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_a_pkcs11_member_stores_keys_only_once_the_token_folders_are_opened(fresh_host):
    slot = fresh_host.zr_prepared
    before = store_key_as_wasadmin(fresh_host, slot, "before")
    assert before.rc != 0, f"a pkcs11 member stored a key before the step: is it still needed?\n{said(before)}"
    assert "CKR_FUNCTION_FAILED" in before.stdout + before.stderr, said(before)
    result = run_snippet(fresh_host, SNIPPET)
    assert result.rc == 0, said(result)
    assert f"opened {TOKEN_DIR[arch(fresh_host)]}" in result.stdout
    after = store_key_as_wasadmin(fresh_host, slot, "after")
    assert after.rc == 0, said(after)
    listed = fresh_host.run(f"PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} p11sak list-key aes --slot {slot}")
    assert '"after"' in listed.stdout, said(listed)


@pytest.mark.from_state(TOKEN_MEMBER)
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_token_folders_belong_to_pkcs11_and_are_closed_to_others(fresh_host):
    run_snippet(fresh_host, SNIPPET)
    for path in ("/var/lib/opencryptoki/swtok", "/var/lib/opencryptoki/swtok/TOK_OBJ",
                 "/var/lib/opencryptoki/swtok/NVTOK.DAT", "/var/lib/opencryptoki/lite"):
        f = fresh_host.file(path)
        assert f.group == "pkcs11", path
        assert f.mode & 0o060 == 0o060, f"{path}: mode {f.mode:o}"
        assert f.mode & 0o007 == 0, f"{path}: mode {f.mode:o}"
        if f.is_directory:
            assert f.mode & 0o070 == 0o070, f"{path}: mode {f.mode:o}"


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_opening_the_token_folders_twice_changes_nothing(fresh_host):
    start_pkcsslotd(fresh_host)
    first = run_snippet(fresh_host, SNIPPET)
    assert first.rc == 0, said(first)
    assert "opened" in first.stdout
    second = run_snippet(fresh_host, SNIPPET)
    assert second.rc == 0, said(second)
    assert "nothing changed" in second.stdout


@pytest.mark.negative("crypto/token/let-pkcs11-group-store-keys.sh",
                      expects="run as a normal user the step stops (Run this as root) and the folder stays root's")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_opening_the_token_folders_as_a_normal_user_stops_with_a_sentence(fresh_host):
    fresh_host.run_expect([0], "useradd -m wasadmin")
    result = fresh_host.run(f"su wasadmin -s /bin/bash -c 'bash /snippets/{SNIPPET}'")
    assert result.rc == 1
    assert "Run this as root" in result.stderr
    assert fresh_host.file("/var/lib/opencryptoki/swtok").group == "root"
