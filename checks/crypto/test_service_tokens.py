"""One token per service (issue 16, finding 17): the opencryptoki.conf stanza of the openCryptoki page
(snippets/crypto/opencryptoki/service-token-slot.conf) gives a second service its own token, with its own
label, PINs and key store, on openCryptoki 3.23 (Debian 13).

- s390x: the stanza as it stands (the ICA token library) is read by the real pkcsslotd, and slot 5 has a token.
- amd64 (no ICA token): the same stanza with the soft token's library, two tokens initialised by init-token.sh
  with different PINs: the first service's PIN does not open the second token, and a key made in the first
  is not in the second. What this does NOT give on 3.23: every pkcs11 member can still reach the second
  token and try PINs on it (locking it); only 3.24's usergroup closes that.
- Negative case: the stanza with usergroup uncommented makes 3.23's pkcsslotd refuse the whole file.
"""

import shlex

import pytest

from checks.hosts.engine import REPO
from checks.hosts.steps import start_pkcsslotd, stop_pkcsslotd
from checks.hosts.token import LABEL, PINS, init_token, slot_of
from checks.hosts.util import output
from zrunbook import SNIPPETS

STANZA = "crypto/opencryptoki/service-token-slot.conf"
USERGROUP = "checks/crypto/bad/service-token-slot-usergroup-on-3.23.conf"
CONF = "/etc/opencryptoki/opencryptoki.conf"
# The second service's token: its own label and PINs (deliberately not the one test set of token.py, so that
# one service's PIN can be tried on the other's token).
IHS = {"TOKEN_SLOT": "5", "TOKEN_SO_PIN": "35792468", "TOKEN_USER_PIN": "97531864"}


def append_stanza(host, text: str) -> None:
    stop_pkcsslotd(host)
    host.run_expect([0], f"printf '\\n%s' {shlex.quote(text)} >> {CONF}")


def p11sak(host, slot: str, pin: str, args: str):
    return host.run(f"PKCS11_USER_PIN={pin} p11sak {args} --slot {slot}")


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(STANZA, checker="testinfra")
def test_pkcsslotd_reads_the_service_slot_and_finds_an_ica_token_there(fresh_host):
    append_stanza(fresh_host, (SNIPPETS / STANZA).read_text())
    start_pkcsslotd(fresh_host)
    info = fresh_host.check_output("pkcsconf -t -c 5")
    assert "Model: ICA" in info, info


@pytest.mark.uses("crypto/token/init-token.sh")
@pytest.mark.snippet(STANZA, checker="testinfra")
def test_each_service_token_has_its_own_pins_and_keys(fresh_host):
    """Also settles what the openCryptoki page says of comments: the stanza's braces hold a '#' line, and 3.23's
    pkcsslotd reads it (an earlier page called that a syntax error)."""
    braces = (SNIPPETS / STANZA).read_text().split("{", 1)[1].split("}", 1)[0]
    assert any(line.lstrip().startswith("#") for line in braces.splitlines()), braces
    start_pkcsslotd(fresh_host)
    first = init_token(fresh_host)
    assert first.rc == 0, output(first)
    was_slot = slot_of(fresh_host)
    append_stanza(fresh_host, (SNIPPETS / STANZA).read_text().replace("libpkcs11_ica.so", "libpkcs11_sw.so"))
    start_pkcsslotd(fresh_host)
    second = init_token(fresh_host, "IHSTOK", **IHS)
    assert second.rc == 0, output(second)
    made = p11sak(fresh_host, was_slot, PINS["TOKEN_USER_PIN"], "generate-key aes 256 --label was-only")
    assert made.rc == 0, output(made)
    # the WAS service's PIN does not open the IHS token, and the WAS key is not there
    wrong = p11sak(fresh_host, "5", PINS["TOKEN_USER_PIN"], "list-key aes")
    assert wrong.rc != 0, output(wrong)
    assert "CKR_PIN_INCORRECT" in wrong.stdout + wrong.stderr
    listed = p11sak(fresh_host, "5", IHS["TOKEN_USER_PIN"], "list-key aes")
    assert listed.rc == 0, output(listed)
    assert "was-only" not in listed.stdout
    assert fresh_host.file("/var/lib/opencryptoki/icatok-ihs").is_directory
    assert fresh_host.check_output(f"pkcsconf -t -c {was_slot}").count(f"Label: {LABEL}") == 1


@pytest.mark.snippet(STANZA, checker="testinfra")
def test_usergroup_on_opencryptoki_3_23_stops_pkcsslotd(fresh_host):
    append_stanza(fresh_host, (REPO / USERGROUP).read_text().replace("libpkcs11_ica.so", "libpkcs11_sw.so"))
    started = fresh_host.run("mkdir -p /run/opencryptoki && systemd-tmpfiles --create "
                             "/usr/lib/tmpfiles.d/opencryptoki.conf; pkcsslotd")
    assert started.rc != 0, output(started)
    assert "unexpected token 'usergroup'" in started.stdout + started.stderr
