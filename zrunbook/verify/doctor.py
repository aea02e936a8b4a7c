"""``make doctor HOST=...``: which known reason makes a host's token stop answering its service users.

``python -m zrunbook doctor --inventory INV --profile SITE.toml --host NAME`` reaches the host as make verify
does (zrunbook/verify/target.py) and runs the host's installed copy of snippets/verify/doctor-probe.sh there as
root (``sudo -n``, the verify account's rules) with the
users of every server the profile gives the host. The probe prints ``FOUND <signature>: ...`` for each signature
it sees and ``SEEN <user>: ...`` for the error that user meets; ``SIGNATURES`` maps each signature to what the
user sees and to the place in the guide that fixes it. checks/verify/test_doctor.py reproduces every signature on
a container host, requires that the user meets the error named here, and that doctor names that signature and
no other. The PIN signatures come from zrunbook/verify/pins.py's FLAGS, the table verify's own messages use.
Signatures doctor does not claim yet (they need IBM Z or another distribution): a token store not
migrated before FIPS mode, SELinux denials on /dev/z90crypt, zcrypt loaded after the slot daemon.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from zrunbook.verify import pins, target
from zrunbook.verify import profile as prof
from zrunbook.verify.report import guide_base
from zrunbook.verify.steps import ROOT, SERVER_PARTS, setting, token_of

PROBE = "verify/doctor-probe.sh"
LOOK_SECONDS = 10  # what each pkcsconf of the probe may take (the probe itself has target.STEP_SECONDS)


@dataclass(frozen=True)
class Signature:
    id: str
    cause: str
    user_sees: str  # in what pkcsconf -t shows the service user (the probe's SEEN lines; the test requires it)
    page: str
    label: str
    fix: str


SIGNATURES = (
    Signature("slotd-stopped", "the slot daemon pkcsslotd is not running", "CKR_HOST_MEMORY",
              "how-to/crypto/03-opencryptoki", "doctor-slotd-stopped",
              "start it with the page's step 1 (systemctl enable --now pkcsslotd)"),
    Signature("slotd-hung", "the slot daemon pkcsslotd runs but does not answer (stopped by a signal, or stuck)",
              "nothing: pkcsconf -t waits", "how-to/verify-your-fleet", "doctor-slotd-hung",
              "send it SIGCONT if it was stopped (kill -CONT); otherwise stop the token's users, restart pkcsslotd "
              "(systemctl restart pkcsslotd) and start the users again"),
    Signature("slotd-defunct", "pkcsslotd has exited, but its parent has not reaped it (a zombie): no slot daemon "
              "serves", "CKR_FUNCTION_FAILED", "how-to/verify-your-fleet", "doctor-slotd-hung",
              "start pkcsslotd again (systemctl restart pkcsslotd); under a container engine, start the container "
              "with an init (--init) that reaps exited processes"),
    *(Signature(f.signature, f"a token's user PIN: {f.name}, {f.means}", see, pins.RECOVER_PAGE,
                pins.RECOVER_LABEL, f.fix)
      for f, see in zip(pins.FLAGS, ("nothing: its logins still work",
                                     "nothing: its logins still work (pkcs11-provider cancels them: httpd's new "
                                     "workers fail)",
                                     "CKR_PIN_LOCKED at login",
                                     "CKR_PIN_EXPIRED after login (openCryptoki's source; not made here)"),
                        strict=True)),
    Signature("so-pin-factory", "a token's security officer PIN is still openCryptoki's default "
              "(SO_PIN_TO_BE_CHANGED): whoever knows it can set a new user PIN and use every key",
              "nothing: its logins still work", "how-to/crypto/03-opencryptoki", "doctor-so-pin-factory",
              "the security officer sets an SO PIN of the site's own (pkcsconf -c SLOT -P)"),
    Signature("pkcs11-group", "the server's user is not in the pkcs11 group", "CKR_FUNCTION_FAILED",
              "how-to/crypto/03-opencryptoki", "doctor-pkcs11-group",
              "add the user with the page's step 2, then restart the server (a running process keeps its groups)"),
    Signature("strength-conf", "/etc/opencryptoki/strength.conf is missing or unreadable for the pkcs11 group",
              "CKR_GENERAL_ERROR", "how-to/verify-your-fleet", "doctor-strength-conf",
              "reinstall the opencryptoki package's file (root:pkcs11, mode 640)"),
    Signature("lock-perms", "a token's lock folder under /var/lock/opencryptoki is not group pkcs11 with rwx",
              "is not in pkcsconf -t", "how-to/verify-your-fleet", "doctor-lock-perms",
              "give the folder back to the group (chgrp pkcs11, chmod 770) and restart the token's users"),
    Signature("stale-shm", "a token's shared memory in /dev/shm is not group pkcs11 with read and write",
              "is not in pkcsconf -t", "how-to/verify-your-fleet", "doctor-stale-shm",
              "stop the token's users and pkcsslotd, delete the segment, start pkcsslotd and the users again"),
)
BY_ID = {s.id: s for s in SIGNATURES}


def parse(output: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The probe's FOUND lines as (signature, detail) and its SEEN lines."""
    found, seen = [], []
    for line in output.splitlines():
        if line.startswith("FOUND "):
            sig, _, detail = line[6:].partition(": ")
            found.append((sig, detail))
        elif line.startswith("SEEN "):
            seen.append(line[5:])
    return found, seen


def users_for(profile: prof.Profile, groups: set[str], hostvars: dict) -> list[str]:
    """The probe's arguments: USER:TOKEN_LABEL for each server the profile gives a host in these groups."""
    users = []
    for part in SERVER_PARTS:
        if profile.server(part) and groups & set(profile.groups(part)):
            token, _ = token_of(profile, part, hostvars)
            user = setting(profile, part, hostvars)["user"]
            users.append(f"{user}:{token.label}" if token else user)
    return list(dict.fromkeys(users))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m zrunbook doctor", description=__doc__.split("\n\n")[0])
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--host", required=True)
    args = parser.parse_args(argv)
    try:
        profile = prof.load(args.profile)
        inventory = target.read_inventory(args.inventory)
        name = args.host
        if name not in inventory.get("_meta", {}).get("hostvars", {}):
            raise target.InventoryError(f"HOST={name} is not a host of the inventory {args.inventory}")
    except (prof.ProfileError, target.InventoryError) as exc:
        print(f"zrunbook doctor: {exc}", file=sys.stderr)
        return 2
    users = users_for(profile, target.groups_of(inventory, name), target.hostvars_of(inventory, name))
    if not users:
        print(f"zrunbook doctor: {name} runs none of the profile's servers: no service user to check", file=sys.stderr)
        return 2
    try:
        host = target.connect(args.inventory, name)
        differs = target.copy_differs(PROBE, target.installed(host))
        if differs:
            print(f"zrunbook doctor: {name}: {differs}", file=sys.stderr)
            return 2
        result = target.run_snippet(host, PROBE, ROOT, {"LOOK_SECONDS": str(LOOK_SECONDS)}, users)
    except target.Unreachable as exc:
        print(f"zrunbook doctor: {name}: {exc}", file=sys.stderr)
        return 2
    if result.rc == 2 or (result.rc != 0 and "FOUND" not in result.stdout):
        if result.rc == target.TIMED_OUT:
            result = target.Result(result.rc, result.stdout, f"no answer within {target.STEP_SECONDS} s; the host "
                                                             "ended the probe")
        print(f"zrunbook doctor: {name}: the probe could not look: {(result.stderr or result.stdout).strip()}",
              file=sys.stderr)
        return 2
    found, seen = parse(result.stdout)
    base = guide_base(profile)
    for user_error in seen:
        print(f"{name}: as {user_error}")
    for sig, detail in found:
        known = BY_ID.get(sig)
        where = f"{base}/{known.page}.html#{known.label}" if known else ""
        print(f"{name}: {sig}: {detail}" + (f"\n    fix: {known.fix}\n    see: {where}" if known else ""))
    if not found:
        print(f"{name}: none of the known signatures ({', '.join(BY_ID)}) for {', '.join(users)}")
    return 1 if found else 0
