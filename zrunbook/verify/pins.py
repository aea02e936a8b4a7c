"""How ``make verify`` keeps a token's user PIN from being locked by its own checks.

openCryptoki counts wrong user PINs in the token's flags (``set_login_flags`` in its sess_mgr.c): the first wrong
PIN sets ``USER_PIN_COUNT_LOW``, the second ``USER_PIN_FINAL_TRY``, the third ``USER_PIN_LOCKED``, and only a
good login clears them (or the security officer's ``C_InitPIN``). A check that logs in with a wrong PIN on every
host, run after run, locks every host's token. So verify:

1. reads every token's flags on every host before any login (``pkcsconf -t``, which does not log in): the
   preflight, in the controller, before the workers start. A token whose flags say a PIN is doubtful
   (``DOUBTFUL``) is never logged into, and its PIN variable is held for the whole run on every host (a wrong
   PIN in the variable is the likely cause, so no other host is tried with it);
2. logs in with a PIN variable on one host at a time (a lock file per variable, shared by the xdist workers),
   and records the first refusal: from then on no step logs in with that variable anywhere in the run.

A wrong PIN therefore costs at most one failed login per PIN variable and run, and a second run costs none:
the first run's refusal left ``USER_PIN_COUNT_LOW`` on that host, which the second run's preflight reads.
``FLAGS`` is the one table of what each flag means for the services and how to recover; verify's messages,
doctor's signatures and the verify page are made from it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

RECOVER_PAGE, RECOVER_LABEL = "how-to/verify-your-fleet", "pin-flags"


@dataclass(frozen=True)
class Flag:
    name: str  # as pkcsconf -t prints it
    bit: int  # CKF_<name> in PKCS #11 (openCryptoki's pkcs11types.h)
    means: str  # what the token says
    apache: str  # what it means for Apache httpd's key through pkcs11-provider 1.0
    java: str  # what it means for Liberty and other Java servers through SunPKCS11
    fix: str  # who does what, and what it costs

    @property
    def services(self) -> str:
        return f"Apache httpd (pkcs11-provider): {self.apache}; Liberty (SunPKCS11): {self.java}"

    @property
    def signature(self) -> str:
        """make doctor's signature id: USER_PIN_COUNT_LOW -> pin-count-low."""
        return self.name.lower().removeprefix("user_").replace("_", "-")


# pkcs11-provider 1.0 reads the flags before each login and cancels it at FINAL_TRY (CKR_CANCEL), LOCKED and
# TO_BE_CHANGED, the good PIN too (check_pin_flags_ok, src/session.c); SunPKCS11 calls C_Login without reading them
# (SunPKCS11.login). Both shown on the runbook's hosts: checks/daytwo/test_pin_final_try.py, checks/was/test_liberty.py.
CLEAR_SNIPPET = "daytwo/clear-pin-count.sh"
FLAGS = (
    Flag("USER_PIN_COUNT_LOW", 0x10000, "a wrong user PIN was given since the last good login",
         "new workers still log in; one more wrong PIN (from anyone) and they no longer can",
         "the server still logs in; two more wrong PINs lock the token",
         "find who holds a wrong PIN (a service's PIN file or environment, a person, a script) and correct it; the "
         "next good login clears the flag: a service's start or reload, or clear-pin-count.sh. Until then verify "
         "does not log in"),
    Flag("USER_PIN_FINAL_TRY", 0x20000, "two wrong user PINs in a row: the next wrong one locks the user PIN",
         "every new login is cancelled, the good PIN too: httpd does not start or restart, and the new workers of a "
         "reload (or of a busier server) fail their handshakes; workers already logged in keep serving. httpd makes "
         "no further login, so it cannot lock the token, and a restart cannot clear the flag",
         "the server logs in: a start with the good PIN clears the flag, a start with a wrong one locks the token",
         "stop whoever holds the wrong PIN first; then the token administrator (a pkcs11 member, not root) clears "
         "the flag with one login with the good PIN (clear-pin-count.sh: that login is the token's last try); then "
         "start or reload each service and check that it serves. Do not restart httpd to clear it, and do not try "
         "PINs by hand"),
    Flag("USER_PIN_LOCKED", 0x40000, "three wrong user PINs in a row: the user PIN is locked",
         "every new login is refused (CKR_PIN_LOCKED): httpd does not start, new workers fail; workers already "
         "logged in keep serving until they end",
         "no new login: the server does not start; a running server keeps its session until it stops",
         "the token's security officer sets a new user PIN with pkcsconf -c SLOT -u (C_InitPIN, which clears the "
         "lock and keeps the keys); then every service's PIN file or environment gets the new PIN and every "
         "service is restarted: an outage for each service that uses the token"),
    Flag("USER_PIN_TO_BE_CHANGED", 0x80000, "no user PIN was ever set: openCryptoki sets the flag when the token is "
         "initialised and clears it at the security officer's first C_InitPIN",
         "no login succeeds, the token has no user PIN (openCryptoki's C_Login: CKR_USER_PIN_NOT_INITIALIZED): "
         "httpd does not start",
         "no login succeeds (CKR_USER_PIN_NOT_INITIALIZED): the server does not start",
         "the token's security officer sets the user PIN with pkcsconf -c SLOT -u (C_InitPIN); pkcsconf -p cannot, "
         "it logs in first. Then the services' PIN files get it"),
)
DOUBTFUL = sum(f.bit for f in FLAGS)
BY_NAME = {f.name: f for f in FLAGS}
REFUSED = ("CKR_PIN_INCORRECT", "CKR_PIN_LOCKED", "CKR_PIN_EXPIRED", "CKR_PIN_LEN_RANGE")


def doubtful(flags: int) -> list[Flag]:
    return [f for f in FLAGS if flags & f.bit]


def describe(label: str, host: str, flags: int) -> str:
    """Why verify does not log in to this token: every doubtful flag with what it means, once."""
    parts = [f"{f.name} ({f.means}; for the services: {f.services})" for f in doubtful(flags)]
    return f"the token {label} on {host} has flags {flags:#x}: " + "; ".join(parts)


@dataclass(frozen=True)
class TokenState:
    slot: str
    flags: int


def parse_pkcsconf(listing: str) -> dict[str, TokenState]:
    """``pkcsconf -t``'s tokens by label: slot and flags (the hex value it prints, not its names)."""
    out, slot, label = {}, None, None
    for line in listing.splitlines():
        if line.startswith("Token #"):
            slot, label = line.split("#", 1)[1].split()[0], None
        elif line.strip().startswith("Label:"):
            label = line.split(":", 1)[1].strip()
        elif line.strip().startswith("Flags:") and slot is not None and label:
            m = re.match(r"\s*Flags:\s*0x([0-9A-Fa-f]+)", line)
            if m:
                out.setdefault(label, TokenState(slot, int(m.group(1), 16)))
    return out


class Guard:
    """The run's shared PIN state: a folder the controller empties before the workers start, with the preflight's
    findings (``preflight.json``), and per PIN variable a lock file and, once a login was refused, where and how."""

    WAIT = 300  # seconds a step waits for another host's login with the same PIN variable

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def reset(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for path in self.directory.iterdir():
            path.unlink()

    # The preflight: per host, the tokens pkcsconf -t lists (or why it could not look), and the held variables.
    def write_preflight(self, hosts: dict[str, dict], held: dict[str, str]) -> None:
        self._write("preflight.json", {"hosts": hosts, "held": held})

    def preflight(self) -> dict:
        return self._read("preflight.json", {"hosts": {}, "held": {}})

    def refused(self, variable: str) -> str | None:
        """Where and how the variable's PIN was refused in this run, or None."""
        try:
            return (self.directory / f"refused-{variable}").read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    @contextmanager
    def login(self, variable: str):
        """Hold the variable's lock while a step logs in with it; yields a function that records a refusal."""
        lock = (self.directory / f"login-{variable}.lock").open("w")
        deadline = time.monotonic() + self.WAIT
        try:
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"waited {self.WAIT} s for another host's login with {variable}") from None
                    time.sleep(0.05)

            def refuse(reason: str) -> None:  # under the variable's lock: one writer
                if self.refused(variable) is None:
                    (self.directory / f"refused-{variable}").write_text(reason, encoding="utf-8")

            yield refuse
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()

    def _read(self, name: str, default):
        try:
            return json.loads((self.directory / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return default

    def _write(self, name: str, data) -> None:
        tmp = self.directory / f".{name}.{os.getpid()}"
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, self.directory / name)
