"""Token tools run as the token administrator, not as root (issue 42, item 2).

Before openCryptoki 3.27 a token tool that root runs follows a link a pkcs11 member planted in the token folders
(CVE-2026-23893). The Apache key step, the PIN change and the key removal run as root for what needs root (the PIN
file, /etc/ssl, httpd) and run every token tool as TOKEN_ADMIN. Observed, not read from the scripts: p11sak,
pkcsconf and openssl (when given a pkcs11: URI) are replaced on the host by wrappers that log who ran them, then the
three steps run as the pages give them. No line of the log may name root; the wrappers must have seen each tool
(else the log proves nothing); and a token tool run as root by hand shows up as root (the observation can fail).
The key step's new objects in the token folder belong to the token administrator. Negatives of the steps'
preconditions: root, nobody, or a user outside pkcs11 as TOKEN_ADMIN stop the step before any token tool runs.

What stays root-run: httpd's parent process logs in to the token as root when it starts (it reads the key for its
workers), and the checks of switch-token-certificate.sh and check-pin-file.sh read the token as httpd will, through
its PIN file, which only root may read. The pages say so. On amd64 only: who runs a tool does not depend on the
architecture.
"""

import re

import pytest

from checks.hosts.apache import TOKEN_KEY, serve_token
from checks.hosts.pin_state import NEW, OLD
from checks.hosts.steps import snippet_path
from checks.hosts.token import ADMIN, slot_of, token_env
from checks.hosts.util import ok, output
from zrunbook import SNIPPETS

KEY_STEP = "ihs/apache/create-token-key-and-csr.sh"
ROTATE = "daytwo/rotate-token-pin.sh"
REMOVE = "daytwo/remove-old-token-key.sh"
LOG = "/tmp/token-tools.log"
TOK_OBJ = "/var/lib/opencryptoki/swtok/TOK_OBJ"
SECOND = "apachekey-2"


def watch(host) -> None:
    """Wrappers in place of p11sak, pkcsconf and openssl that append 'USER TOOL ARGS' to LOG (openssl: only when
    an argument is a pkcs11: URI), then run the real program."""
    ok(host, f": >{LOG} && chmod 666 {LOG}")
    for tool in ("p11sak", "pkcsconf", "openssl"):
        path = ok(host, f"command -v {tool}").strip()
        only = 'case "$*" in *pkcs11:*) ;; *) exec REAL "$@" ;; esac\n' if tool == "openssl" else ""
        script = (f'#!/bin/sh\n{only}echo "$(id -un) {tool} $*" >>{LOG}\nexec REAL "$@"\n').replace("REAL",
                                                                                                  f"{path}.real")
        ok(host, f"mv {path} {path}.real && cat >{path} <<'EOF'\n{script}EOF\nchmod 755 {path}")


def log(host) -> list[str]:
    """The logged runs, less p11sak --version, which opens no token: its main() prints the version before
    init_pkcs11 (p11sak.c, v3.23.0)."""
    return [line for line in ok(host, f"cat {LOG}").splitlines() if line and line.split()[2:] != ["--version"]]


@pytest.mark.snippet(KEY_STEP, ROTATE, REMOVE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_key_step_the_pin_change_and_the_key_removal_run_no_token_tool_as_root(fresh_host):
    host = fresh_host
    serve_token(host)
    watch(host)
    before = set(ok(host, f"ls {TOK_OBJ}").split())
    made = host.run(f"{token_env()} KEY_LABEL={SECOND} CSR=/tmp/{SECOND}.csr bash {snippet_path(KEY_STEP)}")
    assert made.rc == 0, output(made)
    assert ok(host, f"openssl req -in /tmp/{SECOND}.csr -noout -verify 2>&1").strip().endswith("verify OK")
    assert ok(host, f"stat -c %U /tmp/{SECOND}.csr").strip() == "root"
    new = set(ok(host, f"ls {TOK_OBJ}").split()) - before - {"OBJ.IDX"}
    assert new, "the key step stored no object in the token folder"
    owners = set(ok(host, "stat -c %U " + " ".join(f"{TOK_OBJ}/{n}" for n in sorted(new))).split())
    assert owners == {ADMIN}, owners
    rotated = host.run(f"TOKEN_USER_PIN={OLD} NEW_TOKEN_USER_PIN={NEW} TOKEN_ADMIN={ADMIN} "
                       f"bash {snippet_path(ROTATE)} </dev/null")
    assert rotated.rc == 0, output(rotated)
    removed = host.run(f"TOKEN_USER_PIN={NEW} TOKEN_ADMIN={ADMIN} bash {snippet_path(REMOVE)} {SECOND}")
    assert removed.rc == 0, output(removed)
    assert f"removed key pair {SECOND}" in removed.stdout, output(removed)
    lines = log(host)
    assert {line.split()[1] for line in lines} == {"p11sak", "pkcsconf", "openssl"}, lines
    assert any(" pkcsconf -c " in line and line.endswith(" -p") for line in lines), lines  # the PIN change
    assert any(" p11sak remove-key " in line for line in lines), lines
    assert [line for line in lines if line.split()[0] != ADMIN] == []
    # The observation can fail: a token tool that root runs is logged as root.
    host.run(f"PKCS11_USER_PIN={NEW} p11sak list-key private --slot {slot_of(host)}")
    assert [line for line in log(host) if line.startswith("root p11sak list-key")], log(host)


@pytest.mark.negative("ihs/apache/create-token-key-and-csr.sh", "daytwo/rotate-token-pin.sh",
                      "daytwo/remove-old-token-key.sh",
                      expects="each step refuses root, no one or a user outside pkcs11 as TOKEN_ADMIN before any token "
                              "tool runs")
@pytest.mark.snippet(KEY_STEP, ROTATE, REMOVE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.parametrize("admin", ["root", "", "outsider"])
def test_the_steps_refuse_root_no_one_and_a_user_outside_pkcs11_as_token_administrator(fresh_host, admin):
    host = fresh_host
    serve_token(host)
    if admin == "outsider":
        ok(host, f"useradd --system --no-create-home {admin}")
    watch(host)
    who = f"TOKEN_ADMIN={admin}"
    runs = {
        KEY_STEP: f"{token_env(TOKEN_ADMIN=admin)} KEY_LABEL={SECOND} CSR=/tmp/x.csr bash {snippet_path(KEY_STEP)}",
        ROTATE: f"TOKEN_USER_PIN={OLD} NEW_TOKEN_USER_PIN={NEW} {who} bash {snippet_path(ROTATE)} </dev/null",
        REMOVE: f"TOKEN_USER_PIN={OLD} {who} bash {snippet_path(REMOVE)} {SECOND}",
    }
    for step, command in runs.items():
        refused = host.run(command)
        assert refused.rc == 1, (step, output(refused))
        said = refused.stderr
        if admin == "outsider":
            assert "outsider is not a member of the group pkcs11" in said, (step, output(refused))
        else:
            assert "TOKEN_ADMIN to the token administrator, a member" in said, (step, output(refused))
            assert "other than root" in said, (step, output(refused))
    assert log(host) == [], "a step ran a token tool before it refused"
    assert not host.file("/tmp/x.csr").exists


# --- every snippet: a token tool that root runs is gone, or the snippet says why -------------------------------------

QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')
TOKEN_TOOL = re.compile(r"(?<![\w./-])(p11sak|pkcsconf|pkcs11-tool)(?![\w.-])")
RUNS_AS_ROOT = re.compile(r"EUID -eq 0 \]\] \|\||\(\(EUID == 0\)\) \|\||id -u\) -ne 0")
REASON = "# Token tools as root:"


def root_token_lines(text: str) -> list[str]:
    """The code lines of a root-run script that run a token tool (p11sak, pkcsconf, pkcs11-tool, or openssl with a
    pkcs11: URI) other than through as_admin or runuser; quoted text, comments, --version/--help and the
    `command -v` and `for tool in` precondition lines do not count."""
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        code = "" if line.lstrip().startswith("#") else line.split(" #")[0]
        # as_admin and runuser: as the token administrator or a service user; as_group and setpriv --reuid: as the
        # probe user zrprobe (a listed pkcs11 member, the probes' unprivileged identity)
        if not code or re.search(r"\bas_admin\b|\bas_group\b|\brunuser\b|setpriv --reuid=|command -v|^\s*for \w+ in ",
                                 code):
            continue
        bare = QUOTED.sub('""', code)
        if (TOKEN_TOOL.search(bare) and not re.search(r"--version|--help", bare)) or (
                re.search(r"(?<![\w-])openssl\s", bare) and "pkcs11:" in code):
            found.append(line.strip())
    return found


def unexplained(root=SNIPPETS) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.sh")):
        text = path.read_text(encoding="utf-8")
        if RUNS_AS_ROOT.search(text) and REASON not in text and root_token_lines(text):
            out.append(f"{path.relative_to(root)}: {root_token_lines(text)[0]}")
    return out


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*.sh")
def test_no_snippet_runs_a_token_tool_as_root_without_saying_why():
    assert unexplained() == [], (f"run the token tool as TOKEN_ADMIN (as_admin, as the key step does), or say why "
                                 f"root must run it in a comment starting '{REASON}'")


def test_the_rule_finds_a_root_run_token_tool_and_accepts_as_admin_and_a_reason():
    root_script = '[[ $EUID -eq 0 ]] || die "root"\n'
    assert root_token_lines(root_script + 'PKCS11_USER_PIN="$pin" p11sak generate-key rsa 2048 --slot "$slot"\n')
    assert root_token_lines(root_script + 'key=$(OPENSSL_CONF="$conf" openssl pkey -pubin \\\n  -in "pkcs11:x")\n')
    assert not root_token_lines(root_script + 'PKCS11_USER_PIN="$pin" as_admin p11sak list-key rsa\n')
    assert not root_token_lines(root_script + 'die "p11sak could not list the keys (pkcsconf -t)"\n')
    assert not root_token_lines(root_script + "p11sak --version\n")
    assert not root_token_lines(root_script + 'slot=$(as_group pkcsconf -t)\n')
    assert not root_token_lines(root_script + 'setpriv --reuid=zrprobe --regid=pkcs11 --clear-groups -- pkcsconf -t\n')
    assert root_token_lines(root_script + 'setpriv --regid=pkcs11 -- pkcsconf -t\n')  # still root's uid
