"""Token administration without root on openCryptoki 3.23 (Debian 13): root starts pkcsslotd and opens the
token folders to the pkcs11 group once; a token-admin user in pkcs11 (not root) then initialises the token
and sets its PINs. The token page is walked in its own order, each step as the user its caption names
(walkthrough finding M1: step "initialise" used to come before "open the folders", which left a token
without MK_USER that then refused its correct user PIN). openCryptoki 3.24 and later add pkcstok_admin and
a per-token usergroup; the hosts run 3.23, which has neither, so those are not run here."""

import shlex

import pytest

from checks.hosts.engine import SNIPPETS_IN_CONTAINER
from checks.hosts.steps import arch, run_snippet, snippet_path, start_pkcsslotd
from checks.hosts.token import INIT, PINS, init_token, slot_of, token_admin, token_env
from checks.hosts.util import output
from checks.hosts.walks import READER, SERVICE_USER
from zrunbook import walkthrough
from zrunbook.crypto import token_flags

PAGE = "how-to/crypto/03-opencryptoki"
FACTORY_SO_PIN = "87654321"  # openCryptoki's documented default, test data only

OPEN = "crypto/token/let-pkcs11-group-store-keys.sh"
ADMIN = "tokenadmin"


def as_admin(host, command: str):
    return host.run(f"runuser -u {ADMIN} -- env {command}")


@pytest.mark.uses("crypto/token/let-pkcs11-group-store-keys.sh")
@pytest.mark.snippet(INIT, checker="testinfra")
def test_a_pkcs11_member_initialises_the_token_without_root(fresh_host):
    start_pkcsslotd(fresh_host)
    fresh_host.run_expect([0], f"useradd --system --no-create-home --groups pkcs11 {ADMIN}")
    opened = run_snippet(fresh_host, OPEN)
    assert opened.rc == 0, output(opened)
    r = as_admin(fresh_host, f"{token_env()} bash {snippet_path(INIT)}")
    assert r.rc == 0, output(r)
    info = fresh_host.check_output(f"pkcsconf -t -c {slot_of(fresh_host)}")
    assert token_flags.problems(token_flags.flags_in(info)) == [], info


@pytest.mark.snippet(INIT, checker="testinfra")
def test_a_user_outside_pkcs11_cannot_initialise_the_token(fresh_host):
    start_pkcsslotd(fresh_host)
    fresh_host.run_expect([0], f"useradd --system --no-create-home {ADMIN}")
    r = as_admin(fresh_host, f"{token_env()} bash {snippet_path(INIT)}")
    assert r.rc != 0, output(r)
    assert init_token(fresh_host).rc == 0  # root still can: the user, not the token, was the problem


def token_state(host, slot: str) -> tuple[int, str]:
    """The token's flags and label (pkcsconf -t also shows the token's clock, which moves)."""
    info = host.check_output(f"pkcsconf -t -c {slot}")
    label = next(line.strip() for line in info.splitlines() if line.strip().startswith("Label:"))
    return token_flags.flags_in(info), label


def token_files(host) -> str:
    """Every file and folder of the token store with its owner, mode, size, modification time and the files' SHA-256:
    "nothing changed". (Not the change time: any load of the token, root's pkcsconf -t too, sets NVTOK.DAT's
    owner and mode again, which moves it.)"""
    return host.check_output("find /var/lib/opencryptoki -printf '%p %u:%g %m %s %T@\\n' | sort; "
                             "find /var/lib/opencryptoki -type f -exec sha256sum {} + | sort")


@pytest.mark.uses("crypto/opencryptoki/start-pkcsslotd.sh", "crypto/pkcs11-group/add-user-to-pkcs11-group.sh",
                  "crypto/token/let-pkcs11-group-store-keys.sh")
@pytest.mark.snippet(INIT, checker="testinfra")
def test_the_token_page_in_its_order_leaves_a_token_its_administrator_logs_in_to(fresh_host):
    """The page's steps in page order (zrunbook.walkthrough.walk_page), as root except where a caption names the
    token administrator; then the user PIN logs in as that administrator, a pkcs11 member who is not root."""
    for user in (SERVICE_USER, ADMIN):  # the logins step 2 asks for (useradd -m, as the page says)
        fresh_host.run_expect([0], f"id {user} || useradd -m {user}")
    report = walkthrough.walk_page(fresh_host, PAGE, walkthrough.DEBIAN_TABS, READER, arch=arch(fresh_host),
                                   snippets_in_container=SNIPPETS_IN_CONTAINER)
    assert report.failed is None, report.failed
    ran = [step.split("snippets/", 1)[1] for step in report.ran]
    assert ran.index("crypto/token/let-pkcs11-group-store-keys.sh") < ran.index(f"{INIT} as token-admin"), ran
    slot = slot_of(fresh_host)
    info = as_admin(fresh_host, f"pkcsconf -t -c {slot}")
    assert token_flags.problems(token_flags.flags_in(info.stdout)) == [], output(info)
    login = as_admin(fresh_host, f"PKCS11_USER_PIN={shlex.quote(PINS['TOKEN_USER_PIN'])} "
                                 f"p11sak generate-key aes 256 --slot {slot} --label tokenadmin-walk")
    assert login.rc == 0, output(login)
    assert fresh_host.file("/var/lib/opencryptoki/swtok/MK_USER").exists


@pytest.mark.uses("crypto/pkcs11-group/add-user-to-pkcs11-group.sh")
@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="run before the token folder is opened, the step refuses and changes nothing")
@pytest.mark.snippet(INIT, checker="testinfra")
def test_init_token_as_the_administrator_refuses_an_unwritable_token_folder_and_changes_nothing(fresh_host):
    """The old page order: the token administrator initialises before root opened the folders (root:root 0755)."""
    start_pkcsslotd(fresh_host)
    token_admin(fresh_host)
    slot = slot_of(fresh_host)
    before = (token_state(fresh_host, slot), token_files(fresh_host))
    r = as_admin(fresh_host, f"{token_env()} bash {snippet_path(INIT)}")
    assert r.rc == 1, output(r)
    assert "is not writable by tokenadmin" in r.stderr, output(r)
    assert "Nothing was changed" in r.stderr, output(r)
    assert "let-pkcs11-group-store-keys.sh" in r.stderr, output(r)
    assert "done:" not in r.stdout, output(r)
    after = (token_state(fresh_host, slot), token_files(fresh_host))
    changed = set(after[1].splitlines()) ^ set(before[1].splitlines())
    assert after == before, (after[0], before[0], sorted(changed))


@pytest.mark.uses("crypto/pkcs11-group/add-user-to-pkcs11-group.sh", "crypto/token/let-pkcs11-group-store-keys.sh")
@pytest.mark.negative("crypto/token/init-token.sh",
                      expects="a token whose flags say ready but lacks MK_USER is named, not its PIN blamed")
@pytest.mark.snippet(INIT, checker="testinfra")
def test_init_token_names_a_missing_mk_user_instead_of_the_pin(fresh_host):
    """The state the old order left (met in the walkthrough): the PINs set by hand as the administrator while the
    folder was closed, then the folder opened. The step says MK_USER is missing and makes no login."""
    start_pkcsslotd(fresh_host)
    token_admin(fresh_host)
    slot = slot_of(fresh_host)
    so, user = (shlex.quote(PINS[k]) for k in ("TOKEN_SO_PIN", "TOKEN_USER_PIN"))
    as_admin(fresh_host, f"sh -c {shlex.quote(f'echo IBMICATOK | pkcsconf -c {slot} -I -S {FACTORY_SO_PIN}')}")
    as_admin(fresh_host, f"pkcsconf -c {slot} -P -S {FACTORY_SO_PIN} -n {so}")
    as_admin(fresh_host, f"pkcsconf -c {slot} -u -S {so} -n {user}")
    assert run_snippet(fresh_host, OPEN).rc == 0
    folder = "/var/lib/opencryptoki/swtok"
    if not fresh_host.file(f"{folder}/MK_SO").exists or fresh_host.file(f"{folder}/MK_USER").exists:
        pytest.fail(f"the closed folder did not give the walkthrough's state: {token_files(fresh_host)}")
    r = as_admin(fresh_host, f"{token_env()} bash {snippet_path(INIT)}")
    assert r.rc == 1, output(r)
    assert f"MK_USER is missing from {folder}" in r.stderr, output(r)
    assert f"pkcsconf -c {slot} -u" in r.stderr, output(r)
    assert "does not log in" not in r.stderr, output(r)
    flags = token_flags.flags_in(fresh_host.check_output(f"pkcsconf -t -c {slot}"))
    assert not flags & 0x10000, "the step made a failed login"  # USER_PIN_COUNT_LOW
