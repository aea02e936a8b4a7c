"""How-to chapters walked as a reader walks them, on a clean Debian 13 host (issue: walkthrough tests).

The host is the debootstrap base with nothing the checks add (no procps, no systemd-tmpfiles, no
openCryptoki, no Apache) and an offline repository of the packages the pages may install. The steps are the
pages' own snippets in page order, in the Current and Ubuntu/Debian tabs (zrunbook/walkthrough.py reads them
from the pages): scripts run as root with the values a reader sets and the arguments the captions show,
configuration files saved where the captions say. Steps a page declares for what the host lacks (IBM Z
hardware, s390x, an IBM product) are passed over and listed. A chapter walked after others (its index page's
``{walked} :after:``) starts where their walk ended (checks/hosts/walks.py WALKED). Then each walk's outcome.
"""

import shlex

import pytest

from checks.hosts.steps import arch
from checks.hosts.token import LABEL, PINS
from checks.hosts.walks import SERVICE_USER, WALKED, walk
from zrunbook import ROOT, walkthrough
from zrunbook.crypto import token_flags
from zrunbook.guide import outcomes


def token_slot(pkcsconf_t: str, label: str) -> str:
    """The slot number of the token labelled label in pkcsconf -t's output."""
    slot = None
    for line in pkcsconf_t.splitlines():
        if line.startswith("Token #"):
            slot = line.split("#", 1)[1].split()[0]
        elif line.strip() == f"Label: {label}":
            return slot
    raise AssertionError(f"no token labelled {label}:\n{pkcsconf_t}")


def test_each_walk_starts_where_the_chapters_before_it_ended():
    """The states the later walks start from are the walks of the chapters their index pages name."""
    assert walkthrough.walk_order("ihs")[:-1] == walkthrough.walk_order("crypto")
    assert walkthrough.walk_order("webseal")[:-1] == walkthrough.walk_order("ihs")
    assert walkthrough.walk_order("was")[:-1] == walkthrough.walk_order("crypto")


@pytest.mark.arch_dependent("the pages' s390x steps (libica, the ICA token) run only there")
@pytest.mark.walk("crypto")
def test_the_crypto_chapter_walks_on_a_clean_host(clean_host):
    walk(clean_host, "crypto")
    # The outcome, as the service user with only what the pages gave it (runuser reads its groups anew).
    as_user = f"runuser -u {SERVICE_USER} --"
    listed = clean_host.run(f"{as_user} pkcsconf -t")
    assert listed.rc == 0, listed.stdout + listed.stderr
    slot = token_slot(listed.stdout, LABEL)
    flags = clean_host.run(f"{as_user} pkcsconf -t -c {slot}")
    assert token_flags.problems(token_flags.flags_in(flags.stdout)) == [], flags.stdout
    stored = clean_host.run(f"{as_user} env PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} "
                            f"p11sak generate-key aes 256 --slot {slot} --label walk")
    assert stored.rc == 0, stored.stdout + stored.stderr


@pytest.mark.arch_dependent("the token site is set up on the ICA token on s390x")
@pytest.mark.walk("ihs")
@pytest.mark.from_state(WALKED["crypto"])
def test_the_apache_pages_walk_on_a_clean_host_after_the_crypto_chapter(clean_host):
    """The IHS chapter's Apache pages after the crypto chapter (the token page's stated precondition). The
    session page's check (run as a step, with the caption's arguments) is the outcome: returning clients
    resume. On s390x the site at the end is the token page's, so its key is also shown non-extractable."""
    s390x = arch(clean_host) == "s390x"
    # what step 6 asks the reader to give the token site's two shell checks (httpd's user, the certificate's name)
    report = walk(clean_host, "ihs", extra={"SERVICE_USER": "www-data", "SERVER_NAME": "www.example.com"})
    assert any("check-session-resumption.sh" in step for step in report.ran), report.ran
    assert any("check-token-signs.sh" in step for step in report.ran) == s390x, report.ran
    assert sum("needs IBM HTTP Server" in p for p in report.passed_over) >= 6, report.passed_over
    site = clean_host.file("/etc/apache2/sites-enabled/tls.conf").content_string
    assert ("pkcs11:token=" in site) == s390x, site
    if s390x:
        as_httpd = "runuser -u www-data --"
        slot = token_slot(clean_host.check_output(f"{as_httpd} pkcsconf -t"), LABEL)
        listed = clean_host.run(f"{as_httpd} env PKCS11_USER_PIN={shlex.quote(PINS['TOKEN_USER_PIN'])} "
                                f"p11sak list-key rsa --slot {slot} --label apachekey --long")
        assert listed.rc == 0, listed.stdout + listed.stderr
        for attribute in ("CKA_SENSITIVE: CK_TRUE", "CKA_EXTRACTABLE: CK_FALSE", "CKA_NEVER_EXTRACTABLE: CK_TRUE"):
            assert attribute in listed.stdout, listed.stdout


@pytest.mark.arch_dependent("the libraries Db2 loads are in the architecture's multiarch folder")
@pytest.mark.walk("db2")
def test_the_db2_chapter_walks_on_a_clean_host(clean_host):
    """What a Debian host can do of the Db2 chapter is its first page (its check is a step); the kernel page
    needs a machine's own kernel (its outcome runs in checks/db2 in an IPC namespace), the rest Db2 itself."""
    report = walk(clean_host, "db2")
    assert any("verify-prereqs.sh" in step for step in report.ran), report.ran
    assert any("load-ipc-sysctl.sh" in p and "own kernel" in p for p in report.passed_over), report.passed_over
    clean_host.run_expect([0], "test -e /usr/lib/$(uname -m)-linux-gnu/libaio.so.1")


@pytest.mark.walk("was")
@pytest.mark.from_state(WALKED["crypto"])
def test_the_websphere_chapter_walks_on_a_clean_host_after_the_crypto_chapter(clean_host):
    """The open-files page (its check is a step) and the token group; WebSphere's own steps are listed."""
    report = walk(clean_host, "was")
    assert any("check-nofile-limit.sh" in step for step in report.ran), report.ran
    assert "pkcs11" in clean_host.check_output(f"id -nG {SERVICE_USER}").split()
    assert sum("needs WebSphere Application Server" in p for p in report.passed_over) >= 5, report.passed_over


@pytest.mark.walk("webseal")
@pytest.mark.from_state(WALKED["ihs"])
def test_the_webseal_chapter_walks_on_a_clean_host_after_the_crypto_and_ihs_chapters(clean_host):
    """WebSEAL's pages after the chapters they build on: the token step again (it leaves a token initialised
    with the same label alone) and the junction's Apache modules; WebSEAL's own steps are listed."""
    report = walk(clean_host, "webseal")
    modules = clean_host.check_output("apache2ctl -M 2>/dev/null")
    for module in ("ssl_module", "proxy_module", "proxy_http_module", "headers_module"):
        assert module in modules, modules
    assert sum("needs WebSEAL" in p for p in report.passed_over) >= 4, report.passed_over


@pytest.mark.walk("ctg")
def test_the_cics_tg_chapter_has_no_step_a_debian_host_can_run_and_says_why(clean_host):
    """CICS TG runs on z/OS here: nothing to walk, and the chapter's outcome says where it would be proven."""
    report = walk(clean_host, "ctg")
    assert report.ran == [], report.ran
    assert walkthrough.walk_order("ctg") == ("ctg",)
    declared = [o for o in outcomes.declared(ROOT / "docs") if o.page.startswith("how-to/ctg/")]
    assert declared, "the CICS TG chapter declares no outcome"
    assert all(o.not_run_here for o in declared), declared
