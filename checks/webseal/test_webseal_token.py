"""Enabling the token for WebSEAL on a container host, with the crypto chapter's snippets.

WebSEAL's user (ivmgr, in groups ivmgr and tivoli) joins pkcs11 and keeps its groups, and the token is
initialised with the label the recommended webseald entries name. PINs here are test data.
"""

import pytest

from checks.hosts.plugin import run_snippet, snippet_path, start_pkcsslotd
from checks.webseal import values

PINS = "TOKEN_SO_PIN=24681357 TOKEN_USER_PIN=13572468"  # test data only


@pytest.mark.snippet("crypto/pkcs11-group/add-user-to-pkcs11-group.sh", "crypto/token/init-token.sh",
                     "webseal/conf/webseald-pkcs11-current.conf", checker="testinfra")
@pytest.mark.only_hosts("debian13-amd64")
def test_webseal_user_joins_pkcs11_keeps_tivoli_and_the_token_has_the_configured_label(fresh_host):
    user = values.webseal_user()
    fresh_host.run_test(f"groupadd -f tivoli && groupadd -f {user} && useradd -m -g {user} -G tivoli {user}")
    result = run_snippet(fresh_host, "crypto/pkcs11-group/add-user-to-pkcs11-group.sh", user)
    assert result.rc == 0, result.stderr
    assert {"tivoli", "pkcs11", user} <= set(fresh_host.check_output(f"id -nG {user}").split())
    start_pkcsslotd(fresh_host)
    label = values.token_label()
    result = fresh_host.run(f"TOKEN_LABEL={label} {PINS} bash {snippet_path('crypto/token/init-token.sh')}")
    assert result.rc == 0, result.stdout + result.stderr
    assert f"initialised as '{label}'" in result.stdout
