"""The PIN rotation page (docs/how-to/rotate-token-pin.md) walked as its reader walks it, from the built site.

The reader runs the Apache token site of the IHS chapter (the TOKEN_KEY state, on a host booted with systemd, so
that httpd is systemd's ``apache2.service`` and the rotation takes its systemd path, as on a server). Root downloads
the page's steps from their download links on the site this run built (served on localhost, copied into the
container, which has no network) into its downloads folder; the token administrator (``tokenadmin``, a pkcs11 member,
with a home as the crypto page's ``useradd -m`` makes it) downloads the steps the pages give to it into its own.
Every PIN is typed in as the pages advise (``read -rs``; here from standard input), never on a command line.

In page order, as the page's reader meets it: the rotation with a mistyped current PIN (refused, one failed login
counted, httpd untouched); the rotation again, refused at USER_PIN_COUNT_LOW with no login, which sends the reader to
"Clear a final try" (docs/how-to/verify-your-fleet.md); that step as the token administrator in a login shell; the
rotation with the right PINs (step 1); the outcome check (step 3) as the token administrator; the Apache page's key
check with the new PIN as the token administrator; the PIN file check (step 4) as root. Then the page's purpose:
the new PIN logs
in and the old one does not, and httpd, stopped and started by systemd, starts with the new PIN file and serves with
no failed login counted.
"""

from __future__ import annotations

import pytest

from checks.hosts import reader
from checks.hosts.apache import PIN_FILE, TOKEN_KEY
from checks.hosts.pin_state import COUNT_LOW, FAILED, NEW, OLD, WRONG, flags, handshake
from checks.hosts.token import ADMIN
from checks.hosts.util import ok, output

ROTATE = "daytwo/rotate-token-pin.sh"
ROTATED = "daytwo/check-pin-rotated.sh"
PIN_FILE_CHECK = "daytwo/check-pin-file.sh"
CLEAR = "daytwo/clear-pin-count.sh"
CHECK_KEY = "crypto/verify/check-key-in-token.sh"
UNIT = "apache2.service"

pytestmark = [pytest.mark.xdist_group("rotate-walk"),
              pytest.mark.only_hosts("debian13-amd64",
                                     why="the PIN handling is openCryptoki's common code, the same for the soft and "
                                         "the ICA token; under qemu a booted host's logins are too slow to walk")]


def said(result) -> str:
    for pin in (OLD, NEW, WRONG):
        assert pin not in result.stdout + result.stderr, "a step printed a PIN"
    return output(result)


def rotate(host, current: str):
    """Step 1 as root, in root's downloads folder, with the PINs typed in and the token administrator named."""
    return reader.as_root(host, f"TOKEN_ADMIN={ADMIN} bash rotate-token-pin.sh </dev/null",
                          TOKEN_USER_PIN=current, NEW_TOKEN_USER_PIN=NEW)


def main_pid(host) -> str:
    return ok(host, f"systemctl show -P MainPID {UNIT}").strip()


@pytest.mark.reader_walk("how-to/rotate-token-pin")
@pytest.mark.snippet(ROTATE, ROTATED, PIN_FILE_CHECK, CLEAR, CHECK_KEY, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_rotation_page_from_the_site_s_downloads_clears_a_count_rotates_and_httpd_starts_with_the_new_pin(
        site, base_url, booted_host, tmp_path):
    host = booted_host
    ca = reader.serve_under_systemd(host)
    # the page's downloads: root's steps into root's downloads folder, the token administrator's into its own
    reader.keep(host, "root", *reader.snippets(base_url, tmp_path, ROTATE, PIN_FILE_CHECK, CHECK_KEY))
    admin_dl = reader.keep(host, ADMIN, *reader.snippets(base_url, tmp_path, CLEAR, ROTATED))
    pid = main_pid(host)
    pin_file = ok(host, f"sha256sum {PIN_FILE}")

    # a mistyped current PIN: refused before httpd is touched, one failed login counted
    mistyped = rotate(host, WRONG)
    assert mistyped.rc == 1, said(mistyped)
    assert "refused the current PIN" in mistyped.stderr, said(mistyped)
    assert flags(host) & FAILED == COUNT_LOW
    assert main_pid(host) == pid
    assert ok(host, f"sha256sum {PIN_FILE}") == pin_file
    # run again with the right PIN, it refuses at that flag with no login and names the clear step
    again = rotate(host, OLD)
    assert again.rc == 1, said(again)
    assert "clear-pin-count.sh" in again.stderr, said(again)
    assert "no login was made" in again.stderr, said(again)
    assert flags(host) & FAILED == COUNT_LOW

    # "Clear a final try" (the verify page): as the token administrator, in its login shell, the good PIN typed in
    cleared = reader.login(host, ADMIN, f"cd {admin_dl} && bash clear-pin-count.sh", TOKEN_USER_PIN=OLD)
    print(f"\n{cleared.stdout}")
    assert cleared.rc == 0, said(cleared)
    assert "cleared: token" in cleared.stdout, said(cleared)
    assert flags(host) & FAILED == 0

    # 1. change the PIN and restart httpd: systemd stops and starts its unit
    rotated = rotate(host, OLD)
    print(rotated.stdout)
    assert rotated.rc == 0, said(rotated) + ok(host, "journalctl -u apache2 --no-pager | tail -20")
    assert "httpd restarted and serves" in rotated.stdout, said(rotated)
    assert main_pid(host) != pid, "httpd was not stopped and started by systemd"
    assert ok(host, f"stat -c '%a %U' {PIN_FILE}").strip() == "600 root"

    # 3. check that the PIN changed: as the token administrator, the new and the old PIN typed in
    check = reader.login(host, ADMIN, f"cd {admin_dl} && bash check-pin-rotated.sh",
                         TOKEN_USER_PIN=NEW, OLD_TOKEN_USER_PIN=OLD)
    print(check.stdout)
    assert check.rc == 0, said(check)
    assert check.stdout.rstrip().splitlines()[-1].startswith("rotated: token"), said(check)
    # then the Apache page's key check with the new PIN, as the token administrator
    key = reader.key_check(host, TOKEN_USER_PIN=NEW)
    assert key.rc == 0, said(key)

    # 4. the PIN file: as root, with the token's current PIN
    file_check = reader.as_root(host, "bash check-pin-file.sh", TOKEN_USER_PIN=NEW)
    assert file_check.rc == 0, said(file_check)

    # the purpose: the new PIN logs in and the old one does not (the outcome check above, and once more here with
    # the token's own flags); httpd, stopped and started by systemd, starts with the new PIN file and serves
    assert flags(host) & FAILED == 0
    restarted = host.run(f"systemctl restart {UNIT}")
    assert restarted.rc == 0, said(restarted) + ok(host, "journalctl -u apache2 --no-pager | tail -20")
    served = handshake(host, ca)
    assert served.rc == 0, said(served)
    assert flags(host) & FAILED == 0, f"httpd's start counted a failed login: flags {flags(host):#x}"
