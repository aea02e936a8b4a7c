"""The RHEL step that lets httpd use openCryptoki under SELinux (docs/how-to/ihs/05-apache-pkcs11-provider.md).

The check hosts are Debian containers without SELinux, so the SELinux tools are stand-ins: getenforce answers a
mode, setsebool records its arguments and sets the boolean in a state file, getsebool reads it back as the real
tool prints it ("NAME --> on"), and sesearch prints the allow rule for /dev/z90crypt only when the policy is a
current one (selinux-policy 40.13.2-1 or later has it for every domain). The snippet itself runs under bash as root.
"""

import pytest

from checks.hosts.steps import run_snippet
from checks.hosts.util import copy_to, output

STEP = "ihs/apache/allow-httpd-token-selinux.sh"
STATE = "/tmp/selinux"
# name -> script: the stand-ins, each a few lines of shell over the state folder
STAND_INS = {
    "getenforce": f"cat {STATE}/mode",
    "getsebool": f"""[ "$1" = httpd_use_opencryptoki ] && [ -e {STATE}/has-boolean ] || {{
  echo "Error getting active value for $1" >&2; exit 1; }}
echo "$1 --> $(cat {STATE}/boolean)\"""",
    "setsebool": f"""echo "$*" >> {STATE}/setsebool.log
[ "$1" = -P ] && [ -e {STATE}/has-boolean ] && [ "$3" = on ] && echo on > {STATE}/boolean""",
    "sesearch": f"""echo "$*" >> {STATE}/sesearch.log
[ -e {STATE}/current-policy ] && echo 'allow domain crypt_device_t:chr_file {{ getattr ioctl lock open read write }};'
true""",
}


def policy(host, mode="Enforcing", boolean=True, current=True, sesearch=True):
    """The stand-ins installed under /usr/local/sbin with a policy of the given kind."""
    host.run_expect([0], f"rm -rf {STATE} && mkdir -p {STATE} && echo {mode} > {STATE}/mode"
                         f" && echo off > {STATE}/boolean")
    if boolean:
        host.run_expect([0], f"touch {STATE}/has-boolean")
    if current:
        host.run_expect([0], f"touch {STATE}/current-policy")
    for name, body in STAND_INS.items():
        if name == "sesearch" and not sesearch:
            continue
        copy_to(host, f"#!/bin/sh\n{body}\n", f"/usr/local/sbin/{name}")
        host.run_expect([0], f"chmod 755 /usr/local/sbin/{name}")


def step(host, rc: int):
    """The step run as the page runs it, its exit status required."""
    r = run_snippet(host, STEP)
    assert r.rc == rc, output(r)
    return r


@pytest.mark.snippet(STEP, checker="testinfra")
def test_selinux_step_turns_httpd_use_opencryptoki_on_for_good_and_finds_the_z90crypt_rule(fresh_host):
    policy(fresh_host)
    r = step(fresh_host, 0)
    assert fresh_host.file(f"{STATE}/setsebool.log").content_string == "-P httpd_use_opencryptoki on\n"
    assert fresh_host.file(f"{STATE}/boolean").content_string == "on\n"
    assert "httpd_use_opencryptoki is on" in r.stdout
    assert "lets httpd open /dev/z90crypt" in r.stdout
    assert fresh_host.file(f"{STATE}/sesearch.log").content_string == \
        "--allow -s httpd_t -t crypt_device_t -c chr_file -p open\n"
    step(fresh_host, 0)  # safe to run twice


@pytest.mark.negative("ihs/apache/allow-httpd-token-selinux.sh",
                      expects="with a policy that denies httpd the adapter the step fails: RSA will run in software")
@pytest.mark.snippet(STEP, checker="testinfra")
def test_selinux_step_fails_where_the_policy_denies_httpd_the_adapter(fresh_host):
    """Negative case: a policy older than 40.13.2-1 (no rule for crypt_device_t): the boolean is set, and the step
    fails with the reason, since RSA would run in software."""
    policy(fresh_host, current=False)
    r = step(fresh_host, 1)
    assert "httpd_use_opencryptoki is on" in r.stdout
    assert "does not let httpd open /dev/z90crypt: RSA will run in software" in r.stderr


@pytest.mark.snippet(STEP, checker="testinfra")
def test_selinux_step_says_what_it_cannot_tell_and_what_it_need_not_do(fresh_host):
    """Without sesearch it sets the boolean and says it cannot tell about z90crypt; without the boolean in the policy
    it stops with a sentence; with SELinux disabled it changes nothing; without SELinux tools it says so."""
    missing = step(fresh_host, 1)
    assert "getenforce is missing" in missing.stderr
    policy(fresh_host, sesearch=False)
    r = step(fresh_host, 0)
    assert "Cannot tell whether httpd may open /dev/z90crypt: install setools-console" in r.stderr
    policy(fresh_host, boolean=False)
    r = step(fresh_host, 1)
    assert "this policy has no boolean httpd_use_opencryptoki" in r.stderr
    policy(fresh_host, mode="Disabled")
    r = step(fresh_host, 0)
    assert "SELinux is disabled here" in r.stdout
    assert not fresh_host.file(f"{STATE}/setsebool.log").exists
