"""The crypto chapter's token on a container host, set up the way its pages say, with the checks' test PINs.

``PINS``: the one set of test PINs every host check uses (test data: never in snippets/); ``LABEL``: the
token label the study used and the IHS and WebSphere pages name.
``token_env(label, **overrides)``: the shell assignments init-token.sh reads (label, SO PIN, user PIN).
``init_token(host, label, **overrides)``: runs snippets/crypto/token/init-token.sh with them; returns
testinfra's CommandResult. An override replaces or adds one variable: a negative case's wrong PIN.
``ready_token(host, user=None, label=LABEL)``: the chapter's steps as root (start pkcsslotd; the user, when
given, into the pkcs11 group with add-user-to-pkcs11-group.sh; init-token.sh; the token store opened to the
group with let-pkcs11-group-store-keys.sh, after init so that it also covers the files root wrote), each
asserted; returns a ``Token``. The page's own order, with the token administrator initialising, is walked in
checks/crypto/test_token_admin.py.
``slot_of(host)``: the slot of the architecture's token, read from ``pkcsconf -t`` independently of the
snippet (the soft token on amd64, the ICA token on s390x).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from checks.hosts.steps import arch, run_snippet, snippet_path, start_pkcsslotd
from checks.hosts.util import output

INIT = "crypto/token/init-token.sh"
ADD_USER = "crypto/pkcs11-group/add-user-to-pkcs11-group.sh"
OPEN_STORE = "crypto/token/let-pkcs11-group-store-keys.sh"

PINS = {"TOKEN_SO_PIN": "24681357", "TOKEN_USER_PIN": "13572468"}  # test data only
LABEL = "IBMICATOK"
# The token administrator (the crypto page's step 6): a pkcs11 member, not root, as whom the snippets run token tools.
ADMIN = "tokenadmin"
MODEL = {"amd64": "Soft", "s390x": "ICA"}  # the token openCryptoki 3.23 offers on each architecture


@dataclass(frozen=True)
class Token:
    label: str
    slot: str  # as pkcsconf -t numbers it
    said: str  # init-token.sh's output

    @property
    def env(self) -> str:
        """TOKEN_LABEL, TOKEN_SO_PIN, TOKEN_USER_PIN and TOKEN_ADMIN as shell assignments (the snippets read them)."""
        return token_env(self.label)


def token_env(label: str = LABEL, **overrides: str) -> str:
    values = {"TOKEN_LABEL": label, **PINS, "TOKEN_ADMIN": ADMIN, **overrides}
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in values.items())


def init_token(host, label: str = LABEL, **overrides: str):
    return host.run(f"{token_env(label, **overrides)} bash {snippet_path(INIT)}")


def slot_of(host) -> str:
    model = MODEL[arch(host)]
    slot = None
    for line in host.check_output("pkcsconf -t").splitlines():
        if line.startswith("Token #"):
            slot = line.split("#", 1)[1].split()[0]
        elif line.strip().startswith("Model:") and line.split(":", 1)[1].strip() == model:
            return slot
    raise AssertionError(f"no {model} token in pkcsconf -t on {host.zr_name}")


def token_admin(host) -> None:
    """The token administrator: a login in pkcs11 (the crypto page's add-user step), made when it is missing."""
    host.run_expect([0], f"id {ADMIN} || useradd --system --no-create-home {ADMIN}")
    added = run_snippet(host, ADD_USER, ADMIN)
    assert added.rc == 0, output(added)


def ready_token(host, user: str | None = None, label: str = LABEL, *, open_store: bool = True) -> Token:
    """The token ready for user (created with useradd when it does not exist: a stand-in for the product
    that creates it). ``open_store=False`` leaves the token folders as openCryptoki made them (the check
    that shows why the chapter's step 4 is needed)."""
    start_pkcsslotd(host)
    token_admin(host)
    if user is not None:
        host.run_expect([0], f"id {shlex.quote(user)} || useradd -m {shlex.quote(user)}")
        added = run_snippet(host, ADD_USER, user)
        assert added.rc == 0, output(added)
    init = init_token(host, label)
    assert init.rc == 0, output(init)
    if open_store:
        opened = run_snippet(host, OPEN_STORE)
        assert opened.rc == 0, output(opened)
    return Token(label, slot_of(host), init.stdout)


class PinPrinted(AssertionError):
    """A snippet printed one of the test PINs (issue 16, finding 18: no secret is ever printed)."""


def refuse_printed_pins(host) -> None:
    """Wrap host.run so that every command running a snippet (a path under the mounted snippets folder) fails
    its test when the snippet's stdout or stderr contains one of PINS. run_test, check_output and run_expect
    all go through host.run, so every snippet run of every check is covered."""
    run = host.run

    def guarded(command, *args, **kwargs):
        result = run(command, *args, **kwargs)
        text = command if isinstance(command, str) else " ".join(map(str, command))
        if f"{snippet_path('')}" in text:
            printed = [name for name, pin in PINS.items() if pin in result.stdout or pin in result.stderr]
            if printed:
                raise PinPrinted(f"a snippet printed {', '.join(printed)} ({text[:200]}): {output(result)}")
        return result

    host.run = guarded
