"""The CCA and EP11 tokens' configuration (docs/how-to/crypto/07-secure-key-tokens.md), read by openCryptoki itself.

No check host has a Crypto Express adapter or IBM's CCA and EP11 host libraries, but Debian 13's s390x openCryptoki
(3.23) ships both token libraries, and each reads its configuration file before it loads IBM's library
(ccatok.conf: cca_specific.c; ep11tok.conf: ep11_specific.c). So on the s390x host the real parser reads every
file: a good one gets as far as the missing host library, a broken one is refused with the parser's message.
The page's outcome check (check-secure-key-token.sh) reports both from openCryptoki's trace.

- The EP11 slot stanza is read by pkcsslotd, and slot 6 then runs the EP11 token library with ep11tok-tls.conf.
- Every negative case under checks/crypto/bad/secure-key/ is refused, with the message its comment promises, but
  one: the octal APQNs the sample's comment allows are not refused but read as other APQNs, which the check shows.
- A slot whose configuration file is missing, and the ICA token's slot, fail the check with their own sentence.
"""

import shlex

import pytest

from checks.hosts.engine import REPO
from checks.hosts.steps import run_snippet, start_pkcsslotd, stop_pkcsslotd
from checks.hosts.util import copy_to, output
from zrunbook import SNIPPETS

CHECK = "crypto/secure-key/check-secure-key-token.sh"
EP11_CONF = "crypto/secure-key/ep11tok-tls.conf"
CCA_CONF = "crypto/secure-key/ccatok.conf"
SLOT_STANZA = "crypto/secure-key/ep11-tls-token-slot.conf"
BAD = "checks/crypto/bad/secure-key"
OCK = "/etc/opencryptoki"
EP11_SLOT, CCA_SLOT = "6", "2"  # the stanza's slot; the CCA token's slot in Debian's opencryptoki.conf
# what openCryptoki 3.23 says about each negative case (the trace's error line the check quotes)
REFUSED = {
    "ep11tok-apqn-range.conf": "syntax error, unexpected EOL, expecting NUMBER",
    "ep11tok-apqn-as-lszcrypt-prints.conf": "syntax error",
    "ep11tok-domain-256.conf": "Expected valid domain number, found '256'",
    "ep11tok-allowlist-without-end.conf": "syntax error, unexpected end of file",
    "ep11tok-allowlist-and-any.conf": "Only one APQN mode can be present",
    "ep11tok-pkey-enable4all-on-3.23.conf": "unsupported PKEY mode : 'ENABLE4ALL'",
    "ccatok-pkey-mode-on.conf": "unsupported PKEY mode : 'ON'",
}
LIBRARY_MISSING = {"ep11": "IBM's EP11 host library (libep11) is not installed",
                   "cca": "IBM's CCA host library (libcsulcca.so) is not"}


def with_ep11_slot(host, conf_text: str | None) -> None:
    """The page's slot stanza appended to opencryptoki.conf and conf_text as its ep11tok-tls.conf (None: no file);
    pkcsslotd restarted, so it reads the stanza."""
    stop_pkcsslotd(host)
    stanza = shlex.quote((SNIPPETS / SLOT_STANZA).read_text())
    host.run_expect([0], f"printf '\\n%s' {stanza} >> {OCK}/opencryptoki.conf")
    if conf_text is not None:
        copy_to(host, conf_text, f"{OCK}/ep11tok-tls.conf")
    start_pkcsslotd(host)


def with_cca_conf(host, conf_text: str) -> None:
    copy_to(host, conf_text, f"{OCK}/ccatok.conf")
    start_pkcsslotd(host)


def check(host, slot: str):
    return run_snippet(host, CHECK, slot)


@pytest.mark.negative("crypto/secure-key/check-secure-key-token.sh",
                      expects="the check stops at the missing EP11 host library, after the allowlist was read")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(SLOT_STANZA, EP11_CONF, CHECK, checker="ock-token-config")
def test_ep11_token_reads_the_allowlist_and_stops_only_at_the_missing_ep11_library(fresh_host):
    with_ep11_slot(fresh_host, (SNIPPETS / EP11_CONF).read_text())
    assert fresh_host.file("/var/lib/opencryptoki/ep11tok-tls").is_directory  # pkcsslotd took the tokname
    r = check(fresh_host, EP11_SLOT)
    assert r.rc == 1, output(r)
    assert "the EP11 token read its configuration" in r.stderr
    assert LIBRARY_MISSING["ep11"] in r.stderr
    assert "openCryptoki read its APQN allowlist as: 08.000d 0a.000d." in r.stderr
    assert fresh_host.run("ls /var/log/opencryptoki/").stdout.strip() == ""  # the check removed its trace


@pytest.mark.negative("crypto/secure-key/check-secure-key-token.sh",
                      expects="the check stops at the missing CCA library, after the CCA token read its configuration")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(CCA_CONF, CHECK, checker="ock-token-config")
def test_cca_token_reads_its_configuration_and_stops_only_at_the_missing_cca_library(fresh_host):
    with_cca_conf(fresh_host, (SNIPPETS / CCA_CONF).read_text())
    r = check(fresh_host, CCA_SLOT)
    assert r.rc == 1, output(r)
    assert "the CCA token read its configuration" in r.stderr
    assert LIBRARY_MISSING["cca"] in r.stderr


@pytest.mark.uses("crypto/secure-key/ep11-tls-token-slot.conf")
@pytest.mark.negative("crypto/secure-key/check-secure-key-token.sh",
                      expects="openCryptoki refuses each broken token configuration with its parser's message")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(EP11_CONF, CCA_CONF, CHECK, checker="ock-token-config")
@pytest.mark.parametrize("bad", sorted(REFUSED))
def test_openCryptoki_refuses_each_broken_token_configuration(fresh_host, bad):
    text = (REPO / BAD / bad).read_text()
    if bad.startswith("ccatok"):
        with_cca_conf(fresh_host, text)
        slot = CCA_SLOT
    else:
        with_ep11_slot(fresh_host, text)
        slot = EP11_SLOT
    r = check(fresh_host, slot)
    assert r.rc == 1, output(r)
    assert f"slot {slot}: openCryptoki refused the token's configuration file" in r.stderr, output(r)
    assert REFUSED[bad] in r.stderr, output(r)


@pytest.mark.uses("crypto/secure-key/ep11-tls-token-slot.conf")
@pytest.mark.negative("crypto/secure-key/check-secure-key-token.sh",
                      expects="the check fails and shows the other APQNs openCryptoki read from octal numbers")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(EP11_CONF, CHECK, checker="ock-token-config")
def test_octal_apqns_as_the_sample_allows_are_read_as_other_apqns_and_the_check_shows_which(fresh_host):
    """Negative case: 010 015 meant adapter 8, domain 13 (octal, as the comment in openCryptoki's own sample file
    still allows). Since 3.19 the parser knows only decimal and 0x: it reads 0, 10, 0, 15, two other APQNs."""
    with_ep11_slot(fresh_host, (REPO / BAD / "ep11tok-apqn-octal-as-the-sample-says.conf").read_text())
    r = check(fresh_host, EP11_SLOT)
    assert r.rc == 1, output(r)
    assert "openCryptoki read its APQN allowlist as: 00.000a 00.000f." in r.stderr, output(r)


@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(SLOT_STANZA, CHECK, checker="ock-token-config")
def test_check_says_so_when_the_slot_names_a_configuration_file_that_is_missing(fresh_host):
    with_ep11_slot(fresh_host, None)
    r = check(fresh_host, EP11_SLOT)
    assert r.rc == 1, output(r)
    assert "refused the token's configuration file" in r.stderr
    assert "no valid EP 11 config file found" in r.stderr


@pytest.mark.negative("crypto/secure-key/check-secure-key-token.sh",
                      expects="the check refuses the ICA token's slot (not a CCA or EP11 one) and an unconfigured slot")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_check_refuses_the_ica_token_and_an_unknown_slot(fresh_host):
    start_pkcsslotd(fresh_host)
    ica = check(fresh_host, "1")
    assert ica.rc == 1, output(ica)
    assert "holds the ICA token, not a CCA or EP11 one" in ica.stderr
    unknown = check(fresh_host, "9")
    assert unknown.rc == 1, output(unknown)
    assert "slot 9 is not configured" in unknown.stderr
