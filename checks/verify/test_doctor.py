"""make doctor: every signature it claims, reproduced on a container host reached over SSH; the service user meets
the error zrunbook/verify/doctor.py says it meets, and doctor names that signature and no other."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks.hosts import amd64_only, apache
from checks.hosts import engine as eng
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.plugin import SELECTED
from checks.hosts.ssh_targets import LOGIN, Fleet
from checks.hosts.steps import reads, snippet_path, start_pkcsslotd
from checks.hosts.token import PINS, slot_of
from checks.verify.shell_env import reader_env
from zrunbook import ROOT, SNIPPETS
from zrunbook.verify.doctor import BY_ID, SIGNATURES

PROFILE = SNIPPETS / "verify/site-profile.toml"
TOKEN_DIR = {"amd64": "swtok", "s390x": "lite"}  # the token the host's checks use (checks/hosts/token.py MODEL)
# A login as httpd's user with a PIN (the counters move only through logins) and the security officer's new user PIN.
AS_HTTPD = "runuser -u www-data -- env PKCS11_USER_PIN={pin} p11sak list-key private --slot {slot} >/dev/null 2>&1"
WRONG = AS_HTTPD.format(pin="00000000", slot="{slot}") + " || true"
GOOD = AS_HTTPD.format(pin=PINS["TOKEN_USER_PIN"], slot="{slot}")
NEW_USER_PIN = f"pkcsconf -c {{slot}} -u -S {PINS['TOKEN_SO_PIN']} -n {PINS['TOKEN_USER_PIN']} >/dev/null"
# pkcsslotd under a parent that never reaps it (a subreaper that only sleeps), then killed: a zombie.
UNREAPED = ("pkill -x pkcsslotd; sleep 1; python3 -c 'import ctypes, subprocess, time; "
            "ctypes.CDLL(None).prctl(36, 1, 0, 0, 0); subprocess.run([\"pkcsslotd\"]); time.sleep(600)' "
            ">/dev/null 2>&1 & echo $! > /run/zr-unreaper.pid; "
            "for i in $(seq 60); do pgrep -x pkcsslotd >/dev/null && break; sleep 0.5; done; pkill -9 -x pkcsslotd; "
            "for i in $(seq 20); do ps -o stat= -C pkcsslotd | grep -q Z && break; sleep 0.5; done; "
            "ps -o stat= -C pkcsslotd | grep -q Z")
# qemu-user does not make the emulated python a child subreaper (seen: the daemon is reparented to the init and
# reaped), so the unreaped daemon is made on amd64 only; what doctor reads (ps state Z) is the same on both.
NATIVE_ONLY = {"slotd-defunct": pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SUBREAPER)}
REAPED = "kill $(cat /run/zr-unreaper.pid); while pgrep -x pkcsslotd >/dev/null; do sleep 0.2; done"
# Signatures no check host can be given, and why (the table below covers every other one).
NOT_MADE = {"so-pin-factory": "making it re-initialises the token, which the shared host keeps: "
                              "test_a_token_left_at_the_factory_so_pin_is_named makes it on a fresh host",
            "pin-to-be-changed": "openCryptoki 3.23 sets USER_PIN_TO_BE_CHANGED only in a token's first, never "
                                 "initialised state (init_tokenInfo), which doctor leaves out (the s390x host's "
                                 "unused soft token: the healthy-host test shows it is not named)"}
# How each signature is made on the host, and undone (shell, as root, through the container engine).
BREAK = {
    "slotd-stopped": ("pkill -x pkcsslotd; sleep 1", None),
    "slotd-hung": ("pkill -STOP -x pkcsslotd", "pkill -CONT -x pkcsslotd"),
    "slotd-defunct": (UNREAPED, REAPED),
    "pin-count-low": (WRONG, GOOD),
    "pin-final-try": (f"{WRONG}; {WRONG}", GOOD),
    "pin-locked": (f"{WRONG}; {WRONG}; {WRONG}", NEW_USER_PIN),
    "pkcs11-group": ("gpasswd -d www-data pkcs11 >/dev/null", "usermod -aG pkcs11 www-data"),
    "strength-conf": ("mv /etc/opencryptoki/strength.conf /root/", "mv /root/strength.conf /etc/opencryptoki/"),
    "lock-perms": ("chgrp root /var/lock/opencryptoki/{tok} && chmod 700 /var/lock/opencryptoki/{tok}",
                   "chgrp pkcs11 /var/lock/opencryptoki/{tok} && chmod 770 /var/lock/opencryptoki/{tok}"),
    "stale-shm": ("chgrp root /dev/shm/var.lib.opencryptoki.{tok} && chmod 600 /dev/shm/var.lib.opencryptoki.{tok}",
                  "chgrp pkcs11 /dev/shm/var.lib.opencryptoki.{tok} && chmod 660 /dev/shm/var.lib.opencryptoki.{tok}"),
}
pytestmark = pytest.mark.xdist_group("doctor")


@pytest.fixture(scope="module", params=SELECTED, ids=str)
# the doctor's probe and the verify account it installs on the target, and the checks it runs there
@reads("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
       "ihs/apache/check-token-site-files.sh", "verify/doctor-probe.sh", "verify/install-verify-account.sh",
       "verify/zrunbook-verify.sudoers")
def doctor_target(request, zr_host_pool):
    name = request.param
    emulated = eng.HOSTS[name].qemu is not None
    fleet = Fleet(eng.Engine.detect().cli, Path("/tmp") / f"zrd-{os.getpid()}-{name[-5:]}",
                  login="root" if emulated else LOGIN)  # root on qemu-user: see checks/verify/test_verify.py
    host = zr_host_pool.start(name, state=TOKEN_KEY)
    apache.serve_token(host)
    fleet.add(host, "web1")
    inventory = fleet.inventory({"webservers": ["web1"]})
    yield host, inventory, fleet, eng.HOSTS[name].arch
    fleet.close_connections()
    zr_host_pool.remove(host)
    shutil.rmtree(fleet.directory, ignore_errors=True)


def doctor(inventory: Path, host: str = "web1"):
    env = reader_env()
    return subprocess.run([sys.executable, "-m", "zrunbook", "doctor", "--inventory", str(inventory),
                           "--profile", str(PROFILE), "--host", host], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300, check=False)


@pytest.mark.uses("verify/doctor-probe.sh")
def test_the_doctor_table_covers_what_the_probe_can_find():
    probe = (SNIPPETS / "verify/doctor-probe.sh").read_text(encoding="utf-8")
    assert set(BREAK) | set(NOT_MADE) == set(BY_ID)
    assert not set(BREAK) & set(NOT_MADE)
    for sig in SIGNATURES:
        assert f"say {sig.id} " in probe


@pytest.mark.uses("crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                  "ihs/apache/check-token-site-files.sh", "verify/install-verify-account.sh",
                  "verify/site-profile.toml", "verify/zrunbook-verify.sudoers")
@pytest.mark.snippet("verify/doctor-probe.sh", checker="verify")
def test_a_healthy_host_has_no_signature(doctor_target):
    _, inventory, _, _ = doctor_target
    done = doctor(inventory)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "none of the known signatures" in done.stdout


@pytest.mark.uses("verify/site-profile.toml")
@pytest.mark.snippet("verify/doctor-probe.sh", checker="verify")
@pytest.mark.parametrize("signature", [pytest.param(s, marks=NATIVE_ONLY.get(s, ()), id=s) for s in BREAK])
def test_doctor_names_the_signature_the_host_has(doctor_target, signature):
    host, inventory, fleet, arch = doctor_target
    slot = slot_of(host)
    made, undo = (c.format(tok=TOKEN_DIR[arch], slot=slot) if c else c for c in BREAK[signature])
    try:
        host.run_expect([0], made)
        done = doctor(inventory)
        if signature.startswith("pin-"):  # what a service meets at its next login (the probe never logs in)
            good = AS_HTTPD.format(pin=PINS["TOKEN_USER_PIN"], slot=slot)
            done.login = host.run(good.replace(" >/dev/null 2>&1", ""))
    finally:
        if undo:
            host.run_expect([0], undo)
        if signature.startswith("slotd-"):
            start_pkcsslotd(host)
    sig = BY_ID[signature]
    assert done.returncode == 1, done.stdout + done.stderr
    named = {line.split(": ")[1] for line in done.stdout.splitlines() if line.startswith("web1: ") and
             not line.startswith("web1: as ")}
    assert named == {signature}, done.stdout
    assert f"#{sig.label}" in done.stdout
    if signature.startswith("pin-"):
        login = done.login
        if sig.user_sees.startswith("nothing"):
            assert login.rc == 0, login.stdout + login.stderr
        else:
            assert sig.user_sees.split()[0] in login.stdout + login.stderr
        return
    seen = [line for line in done.stdout.splitlines() if line.startswith("web1: as www-data: ")]
    assert any(sig.user_sees.split(":")[0] in line for line in seen), done.stdout


@pytest.mark.uses("verify/site-profile.toml")
@pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_SUBREAPER)
@pytest.mark.snippet("verify/doctor-probe.sh", checker="verify")
def test_an_unreaped_slot_daemon_beside_a_live_one_is_not_named(doctor_target):
    """A leftover: a pkcsslotd that ended and was not reaped, and a new one started after it that serves the tokens.
    Doctor judges the live one (before, it took the oldest, the zombie, and named slotd-defunct)."""
    host, inventory, _, _ = doctor_target
    try:
        host.run_expect([0], UNREAPED)
        host.run_expect([0], "rm -f /run/opencryptoki/pkcsslotd.pid /run/opencryptoki/pkcsslotd.socket && pkcsslotd && "
                             "for i in $(seq 60); do timeout 5 pkcsconf -t >/dev/null 2>&1 && exit 0; sleep 0.5; done; "
                             "exit 1")
        states = host.check_output("ps -o stat= -C pkcsslotd")
        assert "Z" in states, states
        assert any(not s.startswith("Z") for s in states.split()), states
        done = doctor(inventory)
    finally:
        host.run("kill $(cat /run/zr-unreaper.pid); "
                 "for i in $(seq 50); do ps -o stat= -C pkcsslotd | grep -q Z || exit 0; sleep 0.2; done")
        start_pkcsslotd(host)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "none of the known signatures" in done.stdout, done.stdout


@pytest.mark.uses("verify/site-profile.toml")
@pytest.mark.snippet("verify/doctor-probe.sh", checker="verify")
def test_a_hung_slot_daemon_costs_the_probe_s_limit_once_and_leaves_nothing_running(doctor_target):
    host, inventory, fleet, _ = doctor_target
    host.run_expect([0], "pkill -STOP -x pkcsslotd")
    try:
        started = time.monotonic()
        done = doctor(inventory)
        took = time.monotonic() - started
        fleet.close_connections()
        left = host.run("ps -eo stat,args --no-headers | grep -E '(pkcsconf|sudo|timeout|bash -s|runuser)' "
                        "| grep -v grep").stdout
    finally:
        host.run_expect([0], "pkill -CONT -x pkcsslotd")
    assert "slotd-hung" in done.stdout, done.stdout + done.stderr
    assert took < 40, took  # the probe asks the daemon once (LOOK_SECONDS = 10), then no more
    assert left == "", left


@pytest.mark.uses("verify/site-profile.toml")
def test_a_host_not_in_the_inventory_is_named(doctor_target):
    _, inventory, _, _ = doctor_target
    done = doctor(inventory, "web9")
    assert done.returncode == 2
    assert "HOST=web9 is not a host of the inventory" in done.stderr


@pytest.mark.snippet("verify/doctor-probe.sh", checker="testinfra")
def test_a_token_left_at_the_factory_so_pin_is_named(fresh_host):
    """A token initialised by hand (pkcsconf -I with openCryptoki's default SO PIN) and never given an SO PIN of its
    own keeps SO_PIN_TO_BE_CHANGED: the probe names it; after pkcsconf -P it does not."""
    start_pkcsslotd(fresh_host)
    slot = slot_of(fresh_host)
    fresh_host.run_expect([0], f"echo IBMICATOK | pkcsconf -c {slot} -I -S 87654321")
    probe = fresh_host.run(f"bash {snippet_path('verify/doctor-probe.sh')} root:IBMICATOK")
    assert probe.rc == 1, probe.stdout + probe.stderr
    assert "FOUND so-pin-factory: token IBMICATOK: SO_PIN_TO_BE_CHANGED" in probe.stdout, probe.stdout
    fresh_host.run_expect([0], f"pkcsconf -c {slot} -P -S 87654321 -n {PINS['TOKEN_SO_PIN']}")
    again = fresh_host.run(f"bash {snippet_path('verify/doctor-probe.sh')} root:IBMICATOK")
    assert "so-pin-factory" not in again.stdout, again.stdout
