"""make doctor: every signature it claims, reproduced on a container host reached over SSH; the service user meets
the error zrunbook/verify/doctor.py says it meets, and doctor names that signature and no other."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checks.hosts.plugin import SELECTED
from zrunbook import ROOT, SNIPPETS
from zrunbook.hosts import apache
from zrunbook.hosts import engine as eng
from zrunbook.hosts.apache import TOKEN_KEY
from zrunbook.hosts.ssh_targets import LOGIN, Fleet
from zrunbook.hosts.steps import start_pkcsslotd
from zrunbook.verify.doctor import BY_ID, SIGNATURES

PROFILE = SNIPPETS / "verify/site-profile.toml"
TOKEN_DIR = {"amd64": "swtok", "s390x": "lite"}  # the token the host's checks use (zrunbook/hosts/token.py MODEL)
# How each signature is made on the host, and undone (shell, as root, through the container engine).
BREAK = {
    "slotd-stopped": ("pkill -x pkcsslotd; sleep 1", None),
    "pkcs11-group": ("gpasswd -d www-data pkcs11 >/dev/null", "usermod -aG pkcs11 www-data"),
    "strength-conf": ("mv /etc/opencryptoki/strength.conf /root/", "mv /root/strength.conf /etc/opencryptoki/"),
    "lock-perms": ("chgrp root /var/lock/opencryptoki/{tok} && chmod 700 /var/lock/opencryptoki/{tok}",
                   "chgrp pkcs11 /var/lock/opencryptoki/{tok} && chmod 770 /var/lock/opencryptoki/{tok}"),
    "stale-shm": ("chgrp root /dev/shm/var.lib.opencryptoki.{tok} && chmod 600 /dev/shm/var.lib.opencryptoki.{tok}",
                  "chgrp pkcs11 /dev/shm/var.lib.opencryptoki.{tok} && chmod 660 /dev/shm/var.lib.opencryptoki.{tok}"),
}
pytestmark = pytest.mark.xdist_group("doctor")


@pytest.fixture(scope="module", params=SELECTED, ids=str)
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
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", "zrunbook", "doctor", "--inventory", str(inventory),
                           "--profile", str(PROFILE), "--host", host], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300, check=False)


def test_the_doctor_table_covers_what_the_probe_can_find():
    probe = (SNIPPETS / "verify/doctor-probe.sh").read_text(encoding="utf-8")
    assert set(BREAK) == set(BY_ID)
    for sig in SIGNATURES:
        assert f"say {sig.id} " in probe


@pytest.mark.snippet("verify/doctor-probe.sh", checker="verify")
def test_a_healthy_host_has_no_signature(doctor_target):
    _, inventory, _, _ = doctor_target
    done = doctor(inventory)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "none of the known signatures" in done.stdout


@pytest.mark.snippet("verify/doctor-probe.sh", checker="verify")
@pytest.mark.parametrize("signature", [s.id for s in SIGNATURES])
def test_doctor_names_the_signature_the_host_has(doctor_target, signature):
    host, inventory, fleet, arch = doctor_target
    made, undo = (c.format(tok=TOKEN_DIR[arch]) if c else c for c in BREAK[signature])
    host.run_expect([0], made)
    try:
        done = doctor(inventory)
    finally:
        if undo:
            host.run_expect([0], undo)
        else:
            start_pkcsslotd(host)
    sig = BY_ID[signature]
    assert done.returncode == 1, done.stdout + done.stderr
    named = {line.split(": ")[1] for line in done.stdout.splitlines() if line.startswith("web1: ") and
             not line.startswith("web1: as ")}
    assert named == {signature}, done.stdout
    seen = [line for line in done.stdout.splitlines() if line.startswith("web1: as www-data: ")]
    assert any(sig.user_sees in line for line in seen), done.stdout
    assert f"#{sig.label}" in done.stdout


def test_a_host_not_in_the_inventory_is_named(doctor_target):
    _, inventory, _, _ = doctor_target
    done = doctor(inventory, "web9")
    assert done.returncode == 2
    assert "HOST=web9 is not a host of the inventory" in done.stderr
