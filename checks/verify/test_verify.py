"""make verify against container hosts reached over SSH, listed in an Ansible inventory.

The fleet, per host architecture: a good target (the Apache token site of the IHS chapter's pages: the key in
the token), a misconfigured one (the same token, but httpd serves a key from a file: the 2013 study's way), a
weakened one (the token site with TLS 1.0 and 1.1 switched back on, its PIN file readable by every user and its
OpenSSL configuration without the system's include), one whose login user has no sudo, an inventory entry no
container answers, and one with a wrong key. Every target with sudo has the verify account of the page (root's
copies of the checks, sudo rules scoped to them). verify runs
once per fleet, as a user runs it (``python -m zrunbook verify``), with the test PIN in the environment; the
tests read its reports. The good target's file tree and process list are taken before and after the run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from checks.hosts import amd64_only, apache
from checks.hosts import engine as eng
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.plugin import SELECTED
from checks.hosts.ssh_targets import LOGIN, Fleet
from checks.hosts.steps import reads
from checks.hosts.token import PINS
from checks.verify.shell_env import reader_env
from zrunbook import ROOT, SNIPPETS
from zrunbook.verify.steps import BY_ID, STEPS

PROFILE = SNIPPETS / "verify/site-profile.toml"
SITE_CA = "/etc/ssl/certs/zrunbook-site-ca.pem"  # the profile's ca_file
APACHE_STEPS = {s.id for s in STEPS if s.part == "apache"}
CHECKED = ("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
           "ihs/apache/check-session-resumption.sh", "verify/site-profile.toml", "crypto/verify/check-tls-protocols.sh",
           "ihs/apache/check-token-site-files.sh", "verify/install-verify-account.sh", "verify/zrunbook-verify.sudoers",
           "ihs/apache/check-hsts.sh", "monitor/check-certificate-expiry.sh")
# The weakened target's faults, each a false pass of an earlier verify: TLS 1.0/1.1 back on (the server says
# ServerHello, then cannot sign the old handshake with the token key), the PIN file 0644, no system include, key
# caching left on, and no Strict-Transport-Security header (testssl.sh then rates the site A, not A+).
WEAKEN = ("sed -i 's#</VirtualHost>#    SSLProtocol all\\n"
          "    SSLCipherSuite ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0\\n"
          "    SSLOpenSSLConfCmd MinProtocol TLSv1\\n</VirtualHost>#' /etc/apache2/sites-available/tls.conf"
          " && sed -i '/Strict-Transport-Security/d' /etc/apache2/sites-available/tls.conf"
          " && apache2ctl graceful && sleep 2 && chmod 0644 /etc/ssl/private/apache-token.pin"
          " && sed -i -e '/^\\.include/d' -e '/^pkcs11-module-cache-keys/d' /etc/ssl/openssl-pkcs11.conf")
# What verify may change on a target (the snapshot leaves these out): logs, the kernel's and the runtime's
# file systems, and openCryptoki's usage counters and locks (pkcsstats' shared memory is under /dev/shm). The
# token store is compared by content: openCryptoki rewrites NVTOK.DAT at each user login (a new mtime, the
# same bytes), so there the snapshot has each file's sha256 instead of its time.
SNAPSHOT = ("find / -xdev \\( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/log "
            "-o -path /var/lock -o -path /var/lib/opencryptoki \\) -prune -o -printf '%p %s %m %u %T@\\n' | sort; "
            "echo ==; find /var/lib/opencryptoki -printf '%p %s %m %u %y\\n' | sort; "
            "find /var/lib/opencryptoki -type f -exec sha256sum {} + | sort; "
            "echo ==; ps -eo user,args --no-headers | grep -v -e '[p]s -eo' -e '[s]ort' -e 'find /' | sort")

# On amd64 only: under qemu a token login alone takes most of pkcs11-provider's 1 s wait, so the s390x fleet's Apache
# targets failed handshakes (checks/ihs/test_apache_cold_start.py), and what verify decides does not depend on the
# architecture; the check snippets themselves also run on s390x in the chapters' own tests.
pytestmark = [pytest.mark.xdist_group("verify"), pytest.mark.only_hosts("debian13-amd64", why=amd64_only.SLOW_LOGIN)]


def verify(inventory: Path, out: Path, *extra: str, pin: str | None = PINS["TOKEN_USER_PIN"]):
    env = reader_env()
    env.pop("TOKEN_USER_PIN", None)
    if pin is not None:
        env["TOKEN_USER_PIN"] = pin
    return subprocess.run([sys.executable, "-m", "zrunbook", "verify", "--inventory", str(inventory),
                           "--profile", str(PROFILE), "--out", str(out), *extra],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=900, check=False)


def snapshot(host) -> str:
    return host.check_output(SNAPSHOT)


@pytest.fixture(scope="module", params=SELECTED, ids=str)
# what verify reads and runs on the fleet (the steps that apply to its Apache hosts)
@reads("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
       "ihs/apache/check-token-site-files.sh", "verify/doctor-probe.sh", "verify/install-verify-account.sh",
       "verify/site-profile.toml", "verify/zrunbook-verify.sudoers")
def fleet_run(request, zr_host_pool, tmp_path_factory):
    name = request.param
    directory = tmp_path_factory.mktemp(f"verify-{name}")
    emulated = eng.HOSTS[name].qemu is not None
    # Under qemu-user the kernel runs sudo without its setuid bit (binfmt_misc without the C flag), so sudo works
    # only for root there: the s390x fleet logs in as root, and its client offers SHA-512 signature schemes (a
    # host variable, as a user would set one for a host) because qemu's CPACF has no SHA-256 for the ICA token.
    fleet = Fleet(eng.Engine.detect().cli, Path("/tmp") / f"zrv-{os.getpid()}-{name[-5:]}",
                  login="root" if emulated else LOGIN)
    own = {"zrunbook_apache_sigalgs": apache.QEMU_SIGALGS} if emulated else {}

    def start(serve):
        host = zr_host_pool.start(name, state=TOKEN_KEY)
        ca = serve(host)
        host.run_expect([0], f"install -m 644 {ca} {SITE_CA}")
        return host

    good, broken, nosudo = start(apache.serve_token), start(apache.serve_files), start(apache.serve_token)
    weak = start(apache.serve_token)
    weak.run_expect([0], WEAKEN)
    fleet.add(good, "good", **own)
    fleet.add(broken, "misconfigured", **own)
    fleet.add(weak, "weakened", **own)
    fleet.add(nosudo, "nosudo", sudo=False, **own)
    fleet.add_entry("gone", ansible_host=f"zr-no-such-container-{os.getpid()}")
    other = directory / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    # its own connection: with ControlMaster it would ride on the good entry's (same container, same user)
    fleet.add_entry("wrongkey", ansible_host=good.zr_container, ansible_ssh_private_key_file=str(other),
                    ansible_ssh_common_args=f"-F {fleet.ssh_config} -o ControlMaster=no -o ControlPath=none")
    inventory = fleet.inventory({"webservers": ["good", "misconfigured", "weakened", "nosudo", "gone", "wrongkey"]})
    before = snapshot(good)
    run = verify(inventory, directory / "reports")
    if not (directory / "reports" / "verify.json").exists():
        pytest.fail(f"make verify wrote no report:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}", pytrace=False)
    fleet.close_connections()
    after = snapshot(good)
    one = verify(inventory, directory / "one", "--limit", "good")
    fleet.close_connections()
    yield {"name": name, "root_login": emulated, "run": run, "out": directory / "reports", "before": before,
           "after": after, "one": one, "one_out": directory / "one", "inventory": inventory, "good": good}
    for host in (good, broken, weak, nosudo):
        zr_host_pool.remove(host)
    shutil.rmtree(fleet.directory, ignore_errors=True)


def verdicts(out: Path) -> dict[tuple[str, str], dict]:
    data = json.loads((out / "verify.json").read_text(encoding="utf-8"))
    return {(r["host"], r["step"]): r for r in data["results"]}


@pytest.mark.uses("verify/doctor-probe.sh")
@pytest.mark.snippet(*CHECKED, checker="verify")
def test_a_good_target_passes_every_apache_step_and_nothing_else_applies(fleet_run):
    found = verdicts(fleet_run["out"])
    assert {step for (host, step), r in found.items() if host == "good" and r["verdict"] == "passed"} == APACHE_STEPS, \
        fleet_run["run"].stdout[-3000:]
    assert {r["verdict"] for (host, step), r in found.items() if host == "good" and step not in APACHE_STEPS} \
        == {"not applicable"}
    assert "the token signed" in found[("good", "apache-token-signs")]["message"]


@pytest.mark.negative("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                      expects="verify fails exactly the key steps on the misconfigured target")
@pytest.mark.snippet(*CHECKED, checker="verify")
def test_the_misconfigured_target_fails_exactly_the_key_steps(fleet_run):
    """The study's way, a key in a file: both token steps fail with their own sentences; resumption, protocols and the
    files httpd reads (the token's OpenSSL configuration is still in place, only unused) pass."""
    found = verdicts(fleet_run["out"])
    failed = {step for (host, step), r in found.items() if host == "misconfigured" and r["verdict"] == "failed"}
    assert failed == {"apache-key-in-token", "apache-token-signs"}
    assert "is not in this token" in found[("misconfigured", "apache-key-in-token")]["message"]
    assert "signed outside the token" in found[("misconfigured", "apache-token-signs")]["message"]
    assert fleet_run["run"].stderr.rstrip().splitlines()[-1] == \
        "zrunbook verify: exit status 1 (a step failed or could not tell)"
    assert found[("misconfigured", "apache-session-resumption")]["verdict"] == "passed"
    assert fleet_run["run"].returncode == 1


@pytest.mark.negative("verify/site-profile.toml",
                      expects="without sudo rights the steps needing another user fail, saying sudo (or not installed)")
@pytest.mark.snippet("verify/site-profile.toml", checker="verify")
def test_without_sudo_only_the_steps_needing_another_user_fail_and_say_so(fleet_run):
    """The login user has no sudo rights. (On the s390x host the login is root, see fleet_run: there the
    target has no verify account, so the checks that run through sudo are not installed.)"""
    found = verdicts(fleet_run["out"])
    if fleet_run["root_login"]:  # root needs no sudo rule, but the target has no verify account: no checks installed
        for step in ("apache-key-in-token", "apache-token-signs", "apache-site-files"):
            assert "is not installed on the host: run snippets/verify/install-verify-account.sh" in \
                found[("nosudo", step)]["message"], found[("nosudo", step)]["message"]
        login_steps = ("apache-protocols", "apache-session-resumption")
        assert {found[("nosudo", s)]["verdict"] for s in login_steps} == {"passed"}
        return
    for step in ("apache-key-in-token", "apache-token-signs", "apache-site-files"):
        row = found[("nosudo", step)]
        assert row["verdict"] == "failed"
        assert "sudo" in row["message"], row["message"]
    assert found[("nosudo", "apache-session-resumption")]["verdict"] == "passed"
    assert found[("nosudo", "apache-protocols")]["verdict"] == "passed"


@pytest.mark.negative("crypto/verify/check-tls-protocols.sh", "ihs/apache/check-hsts.sh",
                      "ihs/apache/check-token-site-files.sh",
                      expects="verify fails exactly the protocol, HSTS and file steps, each with its reason")
@pytest.mark.snippet(*CHECKED, checker="verify")
def test_the_weakened_target_fails_exactly_the_protocol_hsts_and_file_steps_with_every_reason(fleet_run):
    """Faults that an earlier verify passed: each is found, the file check's three in one message."""
    found = verdicts(fleet_run["out"])
    failed = {step for (host, step), r in found.items() if host == "weakened" and r["verdict"] == "failed"}
    # The TLS 1.0 probe makes the token fail a signature it cannot do; seen in one run of three: the worker that
    # failed it then reset later connections, so resumption failed too (pkcs11-provider 1.0; issue 35's subject).
    assert {"apache-protocols", "apache-site-files", "apache-hsts"} <= failed <= \
        {"apache-protocols", "apache-site-files", "apache-hsts", "apache-session-resumption"}, found
    said = found[("weakened", "apache-hsts")]["message"]
    assert "answers without a Strict-Transport-Security header" in said, said
    said = found[("weakened", "apache-protocols")]["message"]
    assert "offers only TLS 1.0" in said
    assert "offers only TLS 1.1" in said
    said = found[("weakened", "apache-site-files")]["message"]
    assert "does not include the system configuration /etc/ssl/openssl.cnf" in said, said
    assert "is mode 644: every user on the host can read or change it" in said, said
    assert "leaves pkcs11-module-cache-keys at its default, true" in said, said


@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SETUID)
@pytest.mark.snippet("verify/zrunbook-verify.sudoers", "verify/install-verify-account.sh", checker="verify")
def test_the_verify_account_runs_the_checks_and_nothing_else(fleet_run):
    """On the good target, as the login user: the installed checks through sudo, as the users the rules name, and
    pkcsconf -t as zrprobe (group pkcs11 only); a shell, another command, pkcsconf -t as root (it would load
    openCryptoki as root) and a check as the wrong user are refused."""
    host = fleet_run["good"]
    as_login = "runuser -u zrops -- "
    allowed = host.run(f"{as_login}sudo -n -l")
    assert "(root) NOPASSWD: /usr/local/libexec/zrunbook-verify/check-token-signs.sh" in \
        allowed.stdout, allowed.stdout + allowed.stderr
    assert "(zrprobe : pkcs11) NOPASSWD: /usr/sbin/pkcsconf -t" in allowed.stdout, allowed.stdout + allowed.stderr
    assert host.run(f"{as_login}sudo -n -u zrprobe -g pkcs11 pkcsconf -t").rc == 0
    for refused in ("sudo -n /bin/bash -c id", "sudo -n pkcsconf -t", "sudo -n pkcsconf -s", "sudo -n cat /etc/shadow",
                    "sudo -n -u zrprobe -g pkcs11 pkcsconf -s",
                    "sudo -n -u root /usr/local/libexec/zrunbook-verify/check-key-in-token.sh localhost:443",
                    "sudo -n -u www-data /usr/local/libexec/zrunbook-verify/check-token-signs.sh localhost:443"):
        said = host.run(as_login + refused)
        assert said.rc != 0, refused
        assert "a password is required" in said.stderr, (refused, said.stderr)
    copies = host.run("stat -c '%U %a' /usr/local/libexec/zrunbook-verify /usr/local/libexec/zrunbook-verify/*.sh")
    assert set(copies.stdout.split("\n")[:-1]) == {"root 755"}, copies.stdout


# reads every snippet by design (the observer saw each)
@pytest.mark.negative("verify/install-verify-account.sh",
                      expects="visudo refused the rules, nothing was installed in /etc/sudoers.d")
@pytest.mark.uses("**/*")
@pytest.mark.snippet("verify/install-verify-account.sh", checker="verify")
def test_the_install_step_refuses_rules_visudo_refuses_and_installs_nothing(fleet_run):
    """Negative case of the account's step: broken rules (here an alias line cut in half) stop it before
    /etc/sudoers.d changes."""
    host = fleet_run["good"]
    host.run_expect([0], "id zrops || useradd -m zrops")
    rules = "/tmp/zr-snippets/verify/zrunbook-verify.sudoers"
    host.run_expect([0], "rm -rf /tmp/zr-snippets && cp -r /snippets /tmp/zr-snippets && sed -i "
                         f"'s/^Cmnd_Alias  ZR_AS_SERVICE = .*/Cmnd_Alias  ZR_AS_SERVICE =/' {rules} && "
                         "cp /etc/sudoers.d/zrunbook-verify /tmp/before")
    broken = host.run("bash /tmp/zr-snippets/verify/install-verify-account.sh zrops www-data")
    assert broken.rc == 1, broken.stdout + broken.stderr
    assert "visudo refused the rules, nothing was installed in /etc/sudoers.d" in broken.stderr
    host.run_expect([0], "cmp /tmp/before /etc/sudoers.d/zrunbook-verify")


@pytest.mark.negative("verify/site-profile.toml",
                      expects="each step of an unreachable host or a wrong key fails with ssh's words")
@pytest.mark.snippet("verify/site-profile.toml", checker="verify")
def test_an_unreachable_host_and_a_wrong_key_fail_each_step_with_ssh_s_words(fleet_run):
    found = verdicts(fleet_run["out"])
    for step in APACHE_STEPS:
        assert "ssh could not reach the host" in found[("gone", step)]["message"]
        assert "Permission denied" in found[("wrongkey", step)]["message"], found[("wrongkey", step)]["message"]


def test_every_report_names_each_host_and_step_and_links_the_guide(fleet_run):
    out = fleet_run["out"]
    data = json.loads((out / "verify.json").read_text(encoding="utf-8"))
    assert len(data["results"]) == 6 * len(STEPS)
    suite = ET.parse(out / "verify.xml").getroot()
    cases = list(suite.iter("testcase"))
    failures = sum(1 for c in cases if c.find("failure") is not None)
    assert failures == data["totals"]["failed"] + data["totals"].get("cannot tell", 0) > 0
    # each testcase carries its verdict as a property, "cannot tell" as itself
    recorded = sorted(p.get("value") for c in cases for p in c.iter("property") if p.get("name") == "verdict")
    assert recorded == sorted(r["verdict"] for r in data["results"]), recorded
    page = (out / "verify.html").read_text(encoding="utf-8")
    for row in data["results"]:
        step = BY_ID[row["step"]]
        assert row["url"].endswith(f"/{step.page}.html#{step.label}")
        assert f"href='{row['url']}'" in page


def test_verify_changes_nothing_on_the_target(fleet_run):
    """Files (outside logs, counters and runtime file systems) and processes: the same after a verify run."""
    before, after = fleet_run["before"], fleet_run["after"]
    assert before == after, "\n".join(sorted(set(after.splitlines()) ^ set(before.splitlines())))


def test_a_changed_file_shows_in_the_snapshot(fleet_run):
    """The read-only proof's negative case: the snapshot sees one changed file."""
    host = fleet_run["good"]
    before = snapshot(host)
    host.run_expect([0], "touch -d '2001-01-01' /etc/apache2/apache2.conf")
    assert before != snapshot(host)


def test_no_pin_appears_in_any_report(fleet_run):
    for path in (p for p in fleet_run["out"].rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        for pin in PINS.values():
            assert pin not in text, f"{path.name} holds a PIN"
    assert PINS["TOKEN_USER_PIN"] not in fleet_run["run"].stdout + fleet_run["run"].stderr


def test_one_host_whole_runbook_within_30_seconds(fleet_run):
    data = json.loads((fleet_run["one_out"] / "verify.json").read_text(encoding="utf-8"))
    assert data["totals"]["failed"] == 0, fleet_run["one"].stdout[-2000:]
    assert data["seconds"] <= 30, data["seconds"]
