"""verify's sudo-scope step (snippets/verify/check-verify-sudo.sh, issue 42 item 8): on a container host with the
verify page's account step, the login user's rules are exactly the runbook's and the check passes; a broad rule
added beside them (zrops ALL=(ALL) NOPASSWD: ALL, which every check of verify used to pass with), a rule for another
command, the older rule that ran pkcsconf -t as root (review 2026-12 H-1: loading openCryptoki as root follows a
planted link), root as the login, and an account with no rules fail it, each with its sentence.

amd64 only: under qemu-user sudo runs without its setuid bit (checks/verify/test_verify.py says so), and the rules
do not depend on the architecture.
"""

import pytest

from checks.hosts import amd64_only
from checks.hosts.steps import snippet_path
from checks.hosts.util import ok, output

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SETUID)

CHECK = "verify/check-verify-sudo.sh"
ACCOUNT = "verify/install-verify-account.sh"
LOGIN = "zrops"


def as_login(host):
    return host.run(f"runuser -u {LOGIN} -- bash {snippet_path(CHECK)}")


@pytest.mark.uses("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                  "ihs/apache/check-token-site-files.sh", "verify/doctor-probe.sh", "verify/zrunbook-verify.sudoers")
@pytest.mark.negative("verify/check-verify-sudo.sh",
                      expects="the check fails for every sudo rule broader than the page's")
@pytest.mark.snippet(CHECK, ACCOUNT, checker="testinfra")
def test_the_page_s_account_passes_and_every_broader_rule_fails(fresh_host):
    host = fresh_host
    ok(host, f"useradd -m {LOGIN} && id www-data")
    ok(host, f"bash {snippet_path(ACCOUNT)} {LOGIN} www-data")
    scoped = as_login(host)
    assert scoped.rc == 0, output(scoped)
    assert f"{LOGIN} can run through sudo only pkcsconf -t (as zrprobe:pkcs11) and the 4 runbook check(s)" in \
        scoped.stdout, output(scoped)
    # The rule before review 2026-12 H-1: pkcsconf -t as root, which loads openCryptoki as root (CVE-2026-23893).
    ok(host, f"echo '{LOGIN} ALL=(root) NOPASSWD: /usr/sbin/pkcsconf -t' > /etc/sudoers.d/zz-broad"
             " && chmod 440 /etc/sudoers.d/zz-broad && visudo -cf /etc/sudoers.d/zz-broad")
    as_root = as_login(host)
    assert as_root.rc == 1, output(as_root)
    assert "as root: /usr/sbin/pkcsconf -t" in as_root.stderr, output(as_root)
    ok(host, f"echo '{LOGIN} ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/zz-broad && chmod 440 /etc/sudoers.d/zz-broad"
             " && visudo -cf /etc/sudoers.d/zz-broad")
    broad = as_login(host)
    assert broad.rc == 1, output(broad)
    assert f"{LOGIN} can run more through sudo than verify needs" in broad.stderr, output(broad)
    assert "as ALL: ALL" in broad.stderr, output(broad)
    ok(host, f"echo '{LOGIN} ALL=(root) NOPASSWD: /usr/bin/cat' > /etc/sudoers.d/zz-broad")
    one = as_login(host)
    assert one.rc == 1, output(one)
    assert "as root: /usr/bin/cat" in one.stderr, output(one)
    assert "pkcsconf" not in one.stderr, output(one)  # the runbook's own rules are not named
    ok(host, "rm /etc/sudoers.d/zz-broad /etc/sudoers.d/zrunbook-verify")
    none = as_login(host)
    assert none.rc == 1, output(none)
    assert "sudo would not list" in none.stderr, output(none)
    root = host.run(f"bash {snippet_path(CHECK)}")
    assert root.rc == 1, output(root)
    assert "verify logs in as root here" in root.stderr, output(root)
