"""make verify must never lock a fleet's tokens: proved on a fleet of container hosts reached over SSH.

The fleet: Apache token sites set up by the IHS chapter's pages (8 on amd64; not s390x, see pytestmark
under qemu), in the inventory groups ``one`` (web1), ``three`` (web1-web3) and ``webservers`` (all). The tokens'
flags are read with ``pkcsconf -t`` before and after each verify run; openCryptoki counts wrong PINs there
(USER_PIN_COUNT_LOW, then FINAL_TRY, then LOCKED), so the flags tell how many failed logins a run caused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks.hosts import amd64_only, apache
from checks.hosts import engine as eng
from checks.hosts.apache import PIN_FILE, TOKEN_KEY
from checks.hosts.pin_state import assert_one_worker_process, one_worker_process
from checks.hosts.plugin import SELECTED
from checks.hosts.ssh_targets import LOGIN, Fleet
from checks.hosts.steps import reads
from checks.hosts.token import LABEL, PINS, slot_of
from checks.verify.shell_env import reader_env
from zrunbook import ROOT, SNIPPETS
from zrunbook.verify import pins
from zrunbook.verify.target import LOOK_SECONDS

PROFILE = SNIPPETS / "verify/site-profile.toml"
SITE_CA = "/etc/ssl/certs/zrunbook-site-ca.pem"  # the profile's ca_file
WRONG_PIN = "00000000"
CHECKED = ("crypto/verify/check-key-in-token.sh", "verify/site-profile.toml")
COUNT = {0: 0, 0x10000: 1, 0x20000: 2, 0x40000: 3}  # failed logins since the last good one, by flag
# On amd64 only: under qemu a token login alone takes most of pkcs11-provider's 1 s wait, so the s390x fleet's Apache
# targets failed handshakes (checks/ihs/test_apache_cold_start.py), and what verify decides does not depend on the
# architecture; the check snippets themselves also run on s390x in the chapters' own tests.
pytestmark = [pytest.mark.xdist_group("verify-pins"),
              pytest.mark.only_hosts("debian13-amd64", why=amd64_only.SLOW_LOGIN)]


# httpd held to one worker process (pin_state.ONE_PROCESS), so that once in_service has made its login no later
# handshake, verify's included, starts a worker whose first good login would clear the failed-login count these tests
# read (docs/how-to/verify-your-fleet.md, "When a token's PIN count ...").


def verify(inventory: Path, out: Path, *extra: str, profile: Path = PROFILE, **pin_vars: str):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PIN")}
    env.update(pin_vars, PATH=reader_env()["PATH"])
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "zrunbook", "verify", "--inventory", str(inventory),
                           "--profile", str(profile), "--out", str(out), *extra],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=900, check=False)
    done.seconds = time.monotonic() - started
    done.rows = {(r["host"], r["step"]): r for r in json.loads((out / "verify.json").read_text())["results"]} \
        if (out / "verify.json").exists() else {}
    return done


def flags(host) -> int:
    return pins.parse_pkcsconf(host.check_output("pkcsconf -t"))[LABEL].flags


def in_service(host, emulated: bool) -> None:
    """Handshakes before verify, one after another and at once, so that httpd's one worker process (ONE_PROCESS) has
    made its token login, as on a server in service. Not a warm-up for the server's sake (the token page's check
    serves a cold start without a failure): a worker's first login with the right PIN resets the token's failed-login
    count (openCryptoki), so a worker logging in during these checks would erase the very counts they read."""
    sig = f"-sigalgs {apache.QEMU_SIGALGS}" if emulated else ""
    connect = (f"timeout 60 openssl s_client -connect 127.0.0.1:443 -servername www.example.com -CAfile {SITE_CA} "
               f"-brief {sig} </dev/null >/dev/null 2>&1")
    host.run_expect([0], f"for i in 1 2 3 4; do {connect}; done; for i in $(seq 8); do {connect} & done; wait")


def failed_logins(hosts: dict) -> dict[str, int]:
    """Per host, the failed logins since the last good one, read from the token's flags."""
    return {name: COUNT[flags(h) & (0x10000 | 0x20000 | 0x40000)] for name, h in hosts.items()}


def good_login(host, pin: str = PINS["TOKEN_USER_PIN"]) -> None:
    """A login with the right PIN: openCryptoki clears the count (what a service's restart does)."""
    host.run_expect([0], f"runuser -u www-data -- env PKCS11_USER_PIN={pin} p11sak list-key private "
                         f"--slot {slot_of(host)} >/dev/null")


@pytest.fixture(scope="module", params=SELECTED, ids=str)
# what verify runs on the PIN fleet
@reads("crypto/verify/check-token-signs.sh", "ihs/apache/check-token-site-files.sh", "verify/doctor-probe.sh",
       "verify/install-verify-account.sh", "verify/zrunbook-verify.sudoers")
def pin_fleet(request, zr_host_pool, tmp_path_factory):
    name = request.param
    emulated = eng.HOSTS[name].qemu is not None
    size = 3 if emulated else 8
    fleet = Fleet(eng.Engine.detect().cli, Path("/tmp") / f"zrp-{os.getpid()}-{name[-5:]}",
                  login="root" if emulated else LOGIN)  # root on qemu-user: see checks/verify/test_verify.py
    own = {"zrunbook_apache_sigalgs": apache.QEMU_SIGALGS} if emulated else {}
    hosts = {}
    for i in range(1, size + 1):
        host = zr_host_pool.start(name, state=TOKEN_KEY)
        one_worker_process(host)
        ca = apache.serve_token(host)
        host.run_expect([0], f"install -m 644 {ca} {SITE_CA}")
        in_service(host, emulated)
        assert_one_worker_process(host)
        hosts[fleet.add(host, f"web{i}", **own)] = host
    names = list(hosts)
    inventory = fleet.inventory({"one": names[:1], "three": names[:3], "webservers": names})
    yield {"hosts": hosts, "inventory": inventory, "fleet": fleet, "dir": tmp_path_factory.mktemp(f"pins-{name}"),
           "emulated": emulated}
    fleet.close_connections()
    for host in hosts.values():
        zr_host_pool.remove(host)
    shutil.rmtree(fleet.directory, ignore_errors=True)


@pytest.mark.negative("crypto/verify/check-key-in-token.sh",
                      expects="with a wrong PIN the key step fails: one host refused the PIN, one failed login per run "
                              "and none in the next")
@pytest.mark.uses("crypto/verify/check-token-signs.sh", "ihs/apache/check-token-site-files.sh",
                  "verify/doctor-probe.sh", "verify/install-verify-account.sh", "verify/zrunbook-verify.sudoers")
@pytest.mark.snippet(*CHECKED, checker="verify")
def test_a_wrong_pin_costs_one_failed_login_per_run_and_none_in_the_next(pin_fleet):
    """For 1, 3 and every host: run 1 with a wrong PIN fails one login in the whole fleet; run 2 fails none (the
    first run's USER_PIN_COUNT_LOW holds the variable); no token is ever locked. The counts go to the report."""
    hosts, inventory, out = pin_fleet["hosts"], pin_fleet["inventory"], pin_fleet["dir"]
    measured = []
    for group, members in dict.fromkeys((("one", 1), ("three", 3), ("webservers" if len(hosts) > 3 else "three",
                                                                    len(hosts)))):
        assert set(failed_logins(hosts).values()) == {0}
        first = verify(inventory, out / f"{group}-1", "--limit", group, TOKEN_USER_PIN=WRONG_PIN)
        after_first = failed_logins(hosts)
        second = verify(inventory, out / f"{group}-2", "--limit", group, TOKEN_USER_PIN=WRONG_PIN)
        after_second = failed_logins(hosts)
        refused = [n for n, c in after_first.items() if c]
        try:
            assert sum(after_first.values()) == 1, (after_first, first.stdout[-3000:])
            assert after_second == after_first, (after_second, second.stdout[-3000:])
            key_rows = {h: r for (h, s), r in first.rows.items() if s == "apache-key-in-token"}
            assert len(key_rows) == members
            assert "refused the PIN" in key_rows[refused[0]]["message"]
            for other in set(key_rows) - set(refused):
                assert f"the PIN in TOKEN_USER_PIN was refused on {refused[0]}" in key_rows[other]["message"]
            held = {r["message"] for (h, s), r in second.rows.items() if s == "apache-key-in-token"}
            assert all(m.startswith(("not logged in:", "not run:")) and "USER_PIN_COUNT_LOW" in m for m in held), held
            assert first.returncode == second.returncode == 1
        finally:
            for name in refused:
                good_login(hosts[name])
        measured.append(f"{members} host(s): run 1 {sum(after_first.values())} failed login(s), run 2 "
                        f"{sum(after_second.values()) - sum(after_first.values())}; wall {first.seconds:.1f} s")
    print("wrong PIN:", "; ".join(measured))


@pytest.mark.snippet(*CHECKED, checker="verify")
def test_a_token_at_final_try_is_never_logged_into(pin_fleet):
    """Two wrong PINs on web2 (by someone else): verify with the right PIN does not log in there (a good login would
    clear the trace, a wrong one would lock the token), names the flag and how to recover, and holds the PIN
    variable on the other hosts too."""
    hosts, inventory, out = pin_fleet["hosts"], pin_fleet["inventory"], pin_fleet["dir"]
    web2 = hosts["web2"]
    wrong = f"runuser -u www-data -- env PKCS11_USER_PIN={WRONG_PIN} p11sak list-key private --slot {slot_of(web2)}"
    web2.run(wrong)
    web2.run(wrong)
    try:
        assert flags(web2) & 0x20000
        done = verify(inventory, out / "final-try", "--limit", "three", TOKEN_USER_PIN=PINS["TOKEN_USER_PIN"])
        assert flags(web2) & 0x20000, "verify logged in to a token at final try"
        row = done.rows[("web2", "apache-key-in-token")]
        assert row["message"].startswith("not logged in: the token IBMICATOK on web2 has flags 0x2044d: "
                                         "USER_PIN_FINAL_TRY"), row["message"]
        assert f"#{pins.RECOVER_LABEL}" in row["message"]
        for other in ("web1", "web3"):
            assert done.rows[(other, "apache-key-in-token")]["message"].startswith("not run: the token IBMICATOK on "
                                                                                    "web2"), done.rows
            assert done.rows[(other, "apache-token-signs")]["verdict"] == "passed"
    finally:
        good_login(web2)


@pytest.mark.snippet(*CHECKED, checker="verify")
def test_each_token_has_its_own_pin_variable(pin_fleet, tmp_path):
    """web3's token gets its own user PIN (the per-service way): a profile with a second [tokens.NAME] table and a
    host override verifies with both PINs; a wrong PIN in web3's variable costs web3 one failed login and leaves
    the other hosts' checks to pass."""
    hosts, out, fleet = pin_fleet["hosts"], pin_fleet["dir"], pin_fleet["fleet"]
    web3, own_pin = hosts["web3"], "97531864"
    slot = slot_of(web3)
    web3.run_expect([0], f"runuser -u www-data -- pkcsconf -c {slot} -p -U {PINS['TOKEN_USER_PIN']} -n {own_pin}")
    web3.run_expect([0], f"printf %s {own_pin} > {PIN_FILE}")
    try:
        apache.start(web3)
        in_service(web3, pin_fleet["emulated"])
        profile = tmp_path / "site.toml"
        profile.write_text(PROFILE.read_text() + '\n[tokens.web3]\nlabel = "IBMICATOK"\nuser_pin_env = "WEB3_PIN"\n')
        fleet.hosts["web3"]["zrunbook_apache_token"] = "web3"
        own = fleet.inventory({"webservers": list(hosts)[:3]}, tmp_path / "inventory.yml")
        right = verify(own, out / "own-right", profile=profile, TOKEN_USER_PIN=PINS["TOKEN_USER_PIN"], WEB3_PIN=own_pin)
        assert right.returncode == 0, right.stdout[-3000:]
        assert {right.rows[(h, "apache-key-in-token")]["verdict"] for h in ("web1", "web2", "web3")} == {"passed"}
        wrong = verify(own, out / "own-wrong", profile=profile, TOKEN_USER_PIN=PINS["TOKEN_USER_PIN"],
                       WEB3_PIN=WRONG_PIN)
        assert failed_logins({"web3": web3})["web3"] == 1
        refused = wrong.rows[("web3", "apache-key-in-token")]["message"]
        assert "refused the PIN in WEB3_PIN (given to the check as TOKEN_USER_PIN)" in refused, refused
        assert {wrong.rows[(h, "apache-key-in-token")]["verdict"] for h in ("web1", "web2")} == {"passed"}
    finally:
        del fleet.hosts["web3"]["zrunbook_apache_token"]
        good_login(web3, own_pin)
        web3.run_expect([0], f"runuser -u www-data -- pkcsconf -c {slot} -p -U {own_pin} -n {PINS['TOKEN_USER_PIN']}")
        web3.run_expect([0], f"printf %s {PINS['TOKEN_USER_PIN']} > {PIN_FILE}")
        apache.start(web3)
        in_service(web3, pin_fleet["emulated"])


@pytest.mark.snippet(*CHECKED, checker="verify")
def test_a_hung_slot_daemon_costs_one_time_limit_and_leaves_nothing_running(pin_fleet):
    """From the state that cost 199 s (32 s healthy): httpd restarted, so its new workers have no token session yet
    and each handshake waits for the daemon, then the daemon stopped with SIGSTOP. Every Apache step of that host
    fails at once with the daemon's sentence: the run costs the token read's limit (LOOK_SECONDS), not one per step.
    The other hosts pass."""
    hosts, inventory, out, fleet = pin_fleet["hosts"], pin_fleet["inventory"], pin_fleet["dir"], pin_fleet["fleet"]
    web1 = hosts["web1"]
    healthy = verify(inventory, out / "healthy", "--limit", "three", TOKEN_USER_PIN=PINS["TOKEN_USER_PIN"])
    token_steps = {(h, s) for h in ("web1", "web2", "web3") for s in ("apache-key-in-token", "apache-token-signs")}
    assert {healthy.rows[k]["verdict"] for k in token_steps} == {"passed"}, healthy.stdout[-3000:]
    apache.start(web1)  # a restart: new workers, no token session yet
    web1.run_expect([0], "pkill -STOP -x pkcsslotd")
    try:
        hung = verify(inventory, out / "hung", "--limit", "three", TOKEN_USER_PIN=PINS["TOKEN_USER_PIN"])
        fleet.close_connections()
        left = web1.run("ps -eo stat,args --no-headers | grep -E '(pkcsconf|sudo |timeout |bash -s|p11sak)' "
                        "| grep -v grep").stdout
    finally:
        web1.run_expect([0], "pkill -CONT -x pkcsslotd")
    web1_apache = {step: row for (h, step), row in hung.rows.items() if h == "web1" and step.startswith("apache-")}
    assert len(web1_apache) >= 8, sorted(web1_apache)
    for step, row in web1_apache.items():
        assert row["verdict"] == "failed", (step, row)
        assert "the slot daemon pkcsslotd is not answering" in row["message"], (step, row)
    assert {hung.rows[(h, "apache-key-in-token")]["verdict"] for h in ("web2", "web3")} == {"passed"}
    assert hung.seconds <= healthy.seconds + LOOK_SECONDS + 10, (hung.seconds, healthy.seconds)
    assert left == "", left
    print(f"hung slot daemon after a restart: {hung.seconds:.1f} s against {healthy.seconds:.1f} s healthy")
