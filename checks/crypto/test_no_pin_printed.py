"""No snippet prints a PIN (issue 16, finding 18). checks/hosts/plugin.py wraps every container host's run with
checks.hosts.token.refuse_printed_pins, so any snippet run by any check fails its test when a test PIN shows
in its output. These tests prove the guard itself: it stops a snippet that echoes a PIN, lets other output
and non-snippet commands through, and init-token.sh's one error path that used to print the temporary user
PIN now writes it to a file only the caller can read.
"""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from checks.hosts.steps import snippet_path
from checks.hosts.token import PINS, PinPrinted, refuse_printed_pins
from zrunbook import SNIPPETS

HERE = Path(__file__).resolve().parent


def fake_host(stdout="", stderr=""):
    host = SimpleNamespace()
    host.run = lambda command, *a, **k: SimpleNamespace(rc=0, stdout=stdout, stderr=stderr, command=command)
    refuse_printed_pins(host)
    return host


@pytest.mark.negative(invariant="no PIN printed",
                      expects="a snippet's output holding the user PIN raises PinPrinted naming TOKEN_USER_PIN")
def test_a_snippet_that_prints_the_user_pin_fails_its_test():
    host = fake_host(stderr=f"could not set it back; use the PIN {PINS['TOKEN_USER_PIN']}")
    with pytest.raises(PinPrinted, match="TOKEN_USER_PIN"):
        host.run(f"bash {snippet_path('crypto/token/init-token.sh')}")


def test_output_without_a_pin_and_commands_that_are_not_snippets_pass():
    assert fake_host(stdout="slot 3 (Soft): user PIN set").run(f"bash {snippet_path('x.sh')}").rc == 0
    # a test's own command may carry a PIN (pkcs11-tool --pin ...): only snippets are held to the rule
    assert fake_host(stdout=PINS["TOKEN_SO_PIN"]).run("pkcs11-tool --list-objects").rc == 0


def messages_naming_a_pin(path):
    """The die/echo/printf lines of a shell file (continued lines joined) that expand a PIN variable."""
    text = path.read_text().replace("\\\n", " ")
    return [m for m in re.findall(r"\b(?:die|echo|printf)\b[^\n]*", text)
            if re.search(r"\$\{?(temporary|TOKEN_USER_PIN|TOKEN_SO_PIN|initial_so_pin)\b", m)
            and '>"$pin_file"' not in m]


@pytest.mark.uses("crypto/token/init-token.sh")
def test_init_token_never_names_a_pin_variable_in_a_message():
    assert messages_naming_a_pin(SNIPPETS / "crypto/token/init-token.sh") == []


def test_the_old_error_path_that_printed_the_temporary_pin_is_caught():
    assert messages_naming_a_pin(HERE / "bad/init-token-prints-temporary-pin.sh")
