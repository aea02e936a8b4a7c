"""Enabling the token for WebSEAL on a container host, with the crypto chapter's snippets.

WebSEAL's user (ivmgr, in groups ivmgr and tivoli) joins pkcs11 and keeps its groups, and the token is
initialised with the label the recommended webseald entries name (test PINs: checks/hosts/token.py).
"""

import pytest

from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.token import PINS, ready_token
from zrunbook.webseal import values


@pytest.mark.uses("crypto/token/let-pkcs11-group-store-keys.sh")
@pytest.mark.snippet("crypto/pkcs11-group/add-user-to-pkcs11-group.sh", "crypto/token/init-token.sh",
                     "webseal/conf/webseald-pkcs11-current.conf", checker="testinfra")
def test_webseal_user_joins_pkcs11_keeps_tivoli_and_the_token_has_the_configured_label(fresh_host):
    user = values.webseal_user()
    fresh_host.run_expect([0], f"groupadd -f tivoli && groupadd -f {user} && useradd -m -g {user} -G tivoli {user}")
    label = values.token_label()
    token = ready_token(fresh_host, user, label)
    assert {"tivoli", "pkcs11", user} <= set(fresh_host.check_output(f"id -nG {user}").split())
    assert f"initialised as '{label}'" in token.said


FAKE_GSKIT = "/usr/local/ibm/gsk8_64/bin/gsk8capicmd_64"  # the wrapper's default path


@pytest.mark.uses("webseal/conf/webseald-pkcs11-current.conf")
@pytest.mark.snippet("webseal/token/create-webseal-certificate.sh", "ihs/gskit/create-token-certificate.sh",
                     checker="testinfra")
def test_webseal_certificate_step_runs_the_ihs_script_with_webseals_gskit_and_labels(fresh_host):
    # GSKit cannot be installed here: a recording stand-in at WebSEAL's path answers "no such certificate".
    fresh_host.run_expect([0], f"mkdir -p {FAKE_GSKIT.rsplit('/', 1)[0]} /tmp/dl && printf '%s\\n' '#!/bin/sh' "
                        f"'echo \"$*\" >> /tmp/gskit-calls' > {FAKE_GSKIT} && chmod 755 {FAKE_GSKIT}")
    fresh_host.run_expect([0], f"cp {snippet_path('webseal/token/create-webseal-certificate.sh')} "
                        f"{snippet_path('ihs/gskit/create-token-certificate.sh')} /tmp/dl/")
    start_pkcsslotd(fresh_host)
    lib = fresh_host.check_output("ls /usr/lib/*/pkcs11/libopencryptoki.so")
    result = fresh_host.run(f"PKCS11_LIB={lib} TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} "
                            "bash /tmp/dl/create-webseal-certificate.sh")
    assert result.rc == 0, result.stdout + result.stderr
    calls = fresh_host.file("/tmp/gskit-calls").content_string.splitlines()
    assert [c.split()[:2] for c in calls] == [["-cert", "-list"], ["-cert", "-create"], ["-cert", "-details"]]
    create = calls[1].split()
    assert create[create.index("-tokenlabel") + 1] == values.token_label()
    assert create[create.index("-label") + 1] == values.cert_label()
    assert create[create.index("-crypto") + 1] == lib
    assert create[create.index("-pw") + 1] == PINS["TOKEN_USER_PIN"]
    assert "CN=webseal.example.com,O=Example,C=DE" in calls[1]


@pytest.mark.snippet("webseal/token/create-webseal-certificate.sh", checker="testinfra")
def test_webseal_certificate_step_without_the_ihs_script_says_where_to_put_it(host):
    wrapper = snippet_path("webseal/token/create-webseal-certificate.sh")
    host.run_expect([0], f"mkdir -p /tmp/alone && cp {wrapper} /tmp/alone/")
    result = host.run("TOKEN_USER_PIN=1 bash /tmp/alone/create-webseal-certificate.sh")
    assert result.rc == 1
    assert "create-token-certificate.sh is not at /tmp/alone/create-token-certificate.sh" in result.stderr
