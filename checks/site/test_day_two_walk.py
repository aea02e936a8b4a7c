"""The certificate renewal page (docs/how-to/day-two.md, its Apache part) walked as its reader walks it, from the
built site.

The reader runs the Apache token site of the IHS chapter (the TOKEN_KEY state, on a host booted with systemd, so that
httpd is systemd's ``apache2.service`` and the graceful reload is systemd's reload, as on a server). Root downloads the
steps the page runs from their download links on the site this run built (served on localhost, copied into the
container, which has no network): the Apache page's key step and test CA, which the page runs again, and its own
switch and removal steps. The token's user PIN is typed in as the pages advise (``read -rs``; here from standard
input), never on a command line; the token administrator is ``tokenadmin``, a pkcs11 member.

In page order: 1. the key step again as root with the new label and request, the request signed with the test CA
(``CA_DIR`` where the site's test CA is); the removal of the old key tried too early, which the page says it refuses
while the site names the key; 2. the switch with a graceful reload, then the Apache page's key check as the token
administrator;
3. the old key removed. Then the page's purpose: the site presents the new certificate, its key is in the token (the
key check), the old key is gone from the token and the new one stays, and httpd, stopped and started by systemd,
still serves the new certificate.

The page's Liberty part needs a Liberty server (checks/was/test_liberty_renewal.py runs it from the checkout) and is
not walked here.
"""

from __future__ import annotations

import pytest

from checks.hosts import reader
from checks.hosts.apache import CA, TOKEN_KEY
from checks.hosts.token import ADMIN, PINS, slot_of
from checks.hosts.util import ok, output

KEY_STEP = "ihs/apache/create-token-key-and-csr.sh"
TEST_CA = "ihs/apache/test-ca.sh"
SWITCH = "daytwo/switch-token-certificate.sh"
REMOVE = "daytwo/remove-old-token-key.sh"
CHECK_KEY = "crypto/verify/check-key-in-token.sh"
UNIT = "apache2.service"
OLD, NEW = "apachekey", "apachekey-2"  # the page's labels
NEW_CSR, NEW_CERT = "/etc/ssl/www.example.com-2.csr", "/etc/ssl/certs/www.example.com-2.crt"  # the page's files
PIN = PINS["TOKEN_USER_PIN"]

pytestmark = [pytest.mark.xdist_group("day-two-walk"),
              pytest.mark.only_hosts("debian13-amd64",
                                     why="a graceful reload with the token key is the same on both architectures; "
                                         "under qemu a booted host's logins take most of pkcs11-provider's second")]


def said(result) -> str:
    assert PIN not in result.stdout + result.stderr, "a step printed the PIN"
    return output(result)


def fingerprint(host, source: str) -> str:
    return host.run(f"{source} | openssl x509 -noout -fingerprint -sha256").stdout.strip()


def served(host) -> str:
    return fingerprint(host, "openssl s_client -connect 127.0.0.1:443 -servername www.example.com"
                             " </dev/null 2>/dev/null")


def token_keys(host) -> str:
    """The token's keys as the token administrator lists them (p11sak, the PIN from the environment)."""
    listed = reader.as_root(host, f"runuser -u {ADMIN} -- p11sak list-key all --slot {slot_of(host)}",
                            folder="/", PKCS11_USER_PIN=PIN)
    assert listed.rc == 0, said(listed)
    return listed.stdout


def remove_old(host):
    return reader.as_root(host, f"TOKEN_ADMIN={ADMIN} bash remove-old-token-key.sh {OLD}", TOKEN_USER_PIN=PIN)


@pytest.mark.reader_walk("how-to/day-two")
@pytest.mark.snippet(KEY_STEP, TEST_CA, SWITCH, REMOVE, CHECK_KEY, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_renewal_page_from_the_site_s_downloads_serves_the_new_certificate_with_the_old_key_gone(
        site, base_url, booted_host, tmp_path):
    host = booted_host
    reader.serve_under_systemd(host)
    reader.keep(host, "root", *reader.snippets(base_url, tmp_path, KEY_STEP, TEST_CA, SWITCH, REMOVE, CHECK_KEY))
    old = served(host)
    assert old
    assert f'"{OLD}"' in token_keys(host)

    # 1. the new key and its request: the Apache page's key step again, with the page's label and request file
    made = reader.as_root(host, f"KEY_LABEL={NEW} CSR={NEW_CSR} TOKEN_ADMIN={ADMIN} bash create-token-key-and-csr.sh",
                          TOKEN_USER_PIN=PIN)
    print(f"\n{made.stdout}")
    assert made.rc == 0, said(made)
    signed = reader.as_root(host, f"CA_DIR={CA} bash test-ca.sh sign {NEW_CSR} {NEW_CERT}")
    assert signed.rc == 0, said(signed)
    assert served(host) == old, "the key step changed what the site serves"
    # the old key's removal before the switch: refused, the site still names it
    early = remove_old(host)
    assert early.rc == 1, said(early)
    assert f"still names {OLD}" in early.stderr, said(early)

    # 2. the switch with a graceful reload (systemd's reload of the unit), then the Apache page's key check
    switched = reader.as_root(host, f"bash switch-token-certificate.sh {NEW_CERT} {NEW}")
    print(switched.stdout)
    assert switched.rc == 0, said(switched) + ok(host, "journalctl -u apache2 --no-pager | tail -20")
    new = fingerprint(host, f"cat {NEW_CERT}")
    assert served(host) == new != old
    key = reader.key_check(host, TOKEN_USER_PIN=PIN)
    assert key.rc == 0, said(key)

    # 3. the old key removed
    removed = remove_old(host)
    print(removed.stdout)
    assert removed.rc == 0, said(removed)

    # the purpose: the new certificate served with its key in the token, the old key gone, the new one kept, and
    # httpd, stopped and started by systemd, needs nothing of the old key
    keys = token_keys(host)
    assert f'"{OLD}"' not in keys, keys
    assert f'"{NEW}"' in keys, keys
    restarted = host.run(f"systemctl restart {UNIT}")
    assert restarted.rc == 0, said(restarted) + ok(host, "journalctl -u apache2 --no-pager | tail -20")
    assert served(host) == new
    again = reader.key_check(host, TOKEN_USER_PIN=PIN)
    assert again.rc == 0, said(again)
