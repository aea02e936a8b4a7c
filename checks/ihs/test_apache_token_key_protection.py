"""The outcome of the Apache token page's key step: the key cannot be exported from the token, even by httpd's user.

The attempts are the ones a reader made against the key the page used to generate: as www-data, with only
what httpd itself has (the PIN file and the pkcs11 group), a session AES key made in the token wraps the
private key out (C_WrapKey), and the private exponent is read (C_GetAttributeValue). Both must fail for the
key the page generates now, and CKA_EXTRACTABLE must not be switched back on. The negative case generates
a key the old way (pkcs11-tool --keypairgen, as the page did) in the same token: the same attempt wraps it
out, and openssl decrypts the blob outside the token into the private key of that token key, so the check
is shown to detect an exportable key. What this does not prove is said on the page: the token's files stay
readable by root and the pkcs11 group, and the ICA token sends the clear key to the adapter.
"""

import pytest

from checks.hosts.apache import TOKEN_KEY, token_key, token_public_key, try_export, unwrapped_public_key
from checks.hosts.steps import arch
from checks.hosts.token import LABEL, PINS, token_env
from checks.hosts.util import ok, output

KEY_STEP = "ihs/apache/create-token-key-and-csr.sh"
TOKEN_DIR = {"amd64": "/var/lib/opencryptoki/swtok", "s390x": "/var/lib/opencryptoki/lite"}  # soft / ICA token
PROTECTED = {"SENSITIVE": True, "EXTRACTABLE": False, "ALWAYS_SENSITIVE": True, "NEVER_EXTRACTABLE": True,
             "DECRYPT": False, "UNWRAP": False, "SIGN": True}


def list_private_key(host, label: str) -> str:
    """pkcs11-tool's view of the private key (OpenSC, independent of the snippet's p11sak)."""
    module = ok(host, "sed -n 's/^ *pkcs11-module-path *= *//p' /etc/ssl/openssl-pkcs11.conf").strip()
    return ok(host, f"pkcs11-tool --module {module} --token-label {LABEL} --login --pin {PINS['TOKEN_USER_PIN']}"
                    f" --list-objects --type privkey --label {label}")


@pytest.mark.arch_dependent("the ICA token on s390x")
@pytest.mark.snippet(KEY_STEP, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_httpd_user_cannot_wrap_out_or_read_the_token_key(fresh_host):
    token_key(fresh_host)
    tried = try_export(fresh_host, "apachekey")
    assert tried["attributes"] == PROTECTED, tried
    assert tried["wrap"] == "CKR_KEY_UNEXTRACTABLE", tried
    assert "wrapped" not in tried
    assert all(rv != "CKR_OK" for rv in tried["read"].values()), tried
    assert tried["read"]["PRIVATE_EXPONENT"] == "CKR_ATTRIBUTE_SENSITIVE", tried
    assert tried["set_extractable"] != "CKR_OK", tried
    listed = list_private_key(fresh_host, "apachekey")
    assert "Access:     sensitive, always sensitive, never extractable, local" in listed, listed
    assert "Usage:      sign\n" in listed, listed
    # what it does not prove: httpd's user can still read the token's files; the PIN that unlocks them is in a file
    # only root reads, but every httpd worker holds it in its memory (pkcs11-provider keeps what the parent read)
    folder = TOKEN_DIR[arch(fresh_host)]
    readable = fresh_host.run(f"su -s /bin/sh www-data -c 'cat {folder}/MK_USER {folder}/TOK_OBJ/* > /dev/null'")
    assert readable.rc == 0, output(readable)
    assert fresh_host.run("su -s /bin/sh www-data -c 'cat /etc/ssl/private/apache-token.pin'").rc != 0


@pytest.mark.negative("ihs/apache/create-token-key-and-csr.sh",
                      expects="the key step refuses an exportable key (lacks CKA_EXTRACTABLE: CK_FALSE) and writes no "
                              "CSR")
@pytest.mark.arch_dependent("the ICA token on s390x")
@pytest.mark.snippet(KEY_STEP, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_key_generated_the_old_way_is_wrapped_out_and_the_key_step_refuses_it(fresh_host):
    token_key(fresh_host)
    module = ok(fresh_host, "sed -n 's/^ *pkcs11-module-path *= *//p' /etc/ssl/openssl-pkcs11.conf").strip()
    # the page's former command: CKA_EXTRACTABLE left to openCryptoki's default, which is true
    ok(fresh_host, f"pkcs11-tool --module {module} --token-label {LABEL} --login --pin {PINS['TOKEN_USER_PIN']}"
                   " --keypairgen --key-type rsa:2048 --label oldkey --usage-sign")
    tried = try_export(fresh_host, "oldkey")
    assert tried["attributes"]["EXTRACTABLE"] is True, tried
    assert tried["wrap"] == "CKR_OK", tried
    exported = unwrapped_public_key(fresh_host, tried)
    assert "BEGIN PUBLIC KEY" in exported
    assert exported == token_public_key(fresh_host, "oldkey"), "the unwrapped key is not the token's key"
    # the key step, run on that label, stops instead of keeping an exportable key
    again = fresh_host.run(f"{token_env()} KEY_LABEL=oldkey CSR=/tmp/old.csr bash /snippets/{KEY_STEP}")
    assert again.rc == 1, output(again)
    assert "oldkey in token IBMICATOK lacks CKA_EXTRACTABLE: CK_FALSE: it can be exported" in again.stderr
    assert fresh_host.run("test -e /tmp/old.csr").rc != 0
