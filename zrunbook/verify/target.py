"""One host of the user's Ansible inventory, reached the way Ansible reaches it, and a verify step run there.

``read_inventory(path)`` runs ``ansible-inventory --list`` (failing, not warning, on a source it cannot
parse); ``select(inventory, limit)`` names the hosts of a group (or all); ``groups_of``/``hostvars_of`` read
them. ``connect(path, name)`` is pytest-testinfra's Ansible backend (``ansible://NAME``): it turns the host's
inventory variables (``ansible_host``, ``ansible_user``, ``ansible_port``, ``ansible_ssh_common_args``,
``ansible_ssh_private_key_file``, ``ansible_become``...) into an ``ssh`` command, so the user's own SSH
configuration, keys and known_hosts apply. Host keys are checked as ssh checks them: nothing here turns
``StrictHostKeyChecking`` off.

``run_step`` sends the step's environment as ``export`` lines to ``bash -s`` on the host through that ssh command,
on standard input: a PIN never appears on a command line, here or on the host. A step run as the login user
follows as the snippet's own text; a step run as root or as the server's user is the host's installed copy of
the snippet (``INSTALLED``, root's, put there by snippets/verify/install-verify-account.sh), run with
``sudo -n`` (never a password prompt) under the sudo rules of snippets/verify/zrunbook-verify.sudoers, which allow
exactly those copies and ``pkcsconf -t`` and keep only the variables they read. ``installed`` reads the copies'
sha256 so that verify runs no check that differs from its own. Every remote command runs under ``timeout`` on the
host (``STEP_SECONDS``, ``tokens`` ``LOOK_SECONDS``), which ends what it started when the limit passes (TERM,
then KILL), so a hung program (a stopped slot daemon) leaves nothing running; the local ssh has a slightly longer
limit of its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook.verify.steps import LOGIN, ROOT, Step

STEP_SECONDS = 120  # one step on one host, on the host (timeout -k): the resumption check took over 60 s under qemu
LOOK_SECONDS = 20  # reading the tokens' flags (pkcsconf -t) on one host
KILL_AFTER = 5  # seconds between timeout's TERM and its KILL
TIMED_OUT = 124  # timeout's exit status when the limit passed
SLOTD_HUNG = "the slot daemon pkcsslotd is not answering"  # in tokens()'s reason; fleet.py stops a server's steps on it
INSTALLED = "/usr/local/libexec/zrunbook-verify"  # root's copies of the checks verify runs through sudo


class InventoryError(RuntimeError):
    pass


class ToolMissing(RuntimeError):
    pass


def tools_on_path() -> None:
    """Put this virtualenv's bin folder first on PATH when Ansible's programs are there: pytest-testinfra's Ansible
    backend runs ``ansible-inventory`` by name, so ``.tox/verify/bin/python -m zrunbook verify`` from a shell whose
    PATH lacks that folder ended in a pytest internal error. The pytest run and the doctor inherit it."""
    beside = Path(sys.executable).parent
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if (beside / "ansible-inventory").exists() and str(beside) not in parts:
        os.environ["PATH"] = os.pathsep.join([str(beside), *[p for p in parts if p]])


def read_inventory(path: str) -> dict:
    """``ansible-inventory --list`` of path, once per process and file state (path, size, modification time): the
    pytest run's controller, each worker and pytest-testinfra's Ansible backend all ask for it (``connect`` hands the
    backend this answer); a dynamic inventory source is read again in every new process."""
    try:
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _INVENTORIES:
        return json.loads(_INVENTORIES[key])
    found = _read_inventory(path)
    if key is not None:
        _INVENTORIES[key] = json.dumps(found)
    return found


_INVENTORIES: dict[tuple, str] = {}  # read_inventory's answers in this process, as JSON (each caller gets a copy)


def _read_inventory(path: str) -> dict:
    env = {**os.environ, "ANSIBLE_INVENTORY_UNPARSED_FAILED": "true", "ANSIBLE_VERBOSITY": "0",
           "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "true", "ANSIBLE_NOCOLOR": "1"}
    beside = Path(sys.executable).with_name("ansible-inventory")  # this virtualenv's, else the PATH's
    program = str(beside) if beside.exists() else shutil.which("ansible-inventory")
    if program is None:  # not an inventory problem: the checker must not count it as the file's fault
        raise ToolMissing("ansible-inventory is missing: install ansible-core (pip install 'ansible-core>=2.17') "
                          "or run make verify, which installs it")
    done = subprocess.run([program, "--list", "-i", path], capture_output=True, text=True, env=env, timeout=60,
                          check=False)
    if done.returncode != 0:
        raise InventoryError(f"the inventory {path} does not parse: {_first_reason(done.stderr)}")
    return json.loads(done.stdout)


HOST_KEYS_OFF = ("stricthostkeychecking=no", "stricthostkeychecking no", "userknownhostsfile=/dev/null",
                 "userknownhostsfile /dev/null")


def _first_reason(stderr: str) -> str:
    """Ansible's first parser's complaint (the YAML one for a YAML file) and where, from its warnings."""
    reason = re.search(r"^\[(?:WARNING|ERROR)\]: Failed to parse inventory with '\w+' plugin: (.+)$", stderr, re.M)
    origin = re.search(r"^Origin: (\S+:\d+:\d+)$", stderr, re.M)
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = reason.group(1) if reason else (lines[0] if lines else "ansible-inventory failed")
    return f"{said} (at {origin.group(1)})" if origin else said


def override_keys() -> set[str]:
    """The host variables ``zrunbook_<part>_<key>`` an inventory may set (zrunbook/verify/steps.py values())."""
    schema = json.loads((Path(__file__).with_name("profile.schema.json")).read_text(encoding="utf-8"))
    server = set(schema["$defs"]["server"]["properties"]) - {"groups"}
    crypto = set(schema["properties"]["crypto"]["properties"]) - {"groups"}
    parts = schema["properties"]["servers"]["properties"]
    return {f"zrunbook_{p}_{k}" for p in parts for k in server} | {f"zrunbook_crypto_{k}" for k in crypto}


def inventory_problems(path: Path) -> list[str]:
    """The inventory checker (zrunbook/checkers.toml): ansible-inventory must parse it; no host may switch host
    key checking off; every zrunbook_* variable must be a profile key."""
    try:
        inventory = read_inventory(str(path))
    except InventoryError as exc:
        return [str(exc)]
    out, known = [], override_keys()
    for host, hostvars in inventory.get("_meta", {}).get("hostvars", {}).items():
        for name, value in hostvars.items():
            if name == "ansible_host_key_checking" and str(value).lower() in ("false", "no", "0"):
                out.append(f"{host}: ansible_host_key_checking is off: verify must know whom it talks to")
            if name.startswith("ansible_ssh_") and any(k in str(value).lower() for k in HOST_KEYS_OFF):
                out.append(f"{host}: {name} switches host key checking off ({value}): put the host's key in "
                           "known_hosts instead")
            if name.startswith("zrunbook_") and name not in known:
                out.append(f"{host}: {name} is not a value verify takes (zrunbook_<server>_<key>: "
                           f"{', '.join(sorted(known)[:4])}, ...)")
    return out


def _members(inventory: dict, group: str) -> list[str]:
    entry = inventory.get(group, {})
    hosts = list(entry.get("hosts", []))
    for child in entry.get("children", []):
        hosts += _members(inventory, child)
    return hosts


def select(inventory: dict, limit: str | None) -> list[str]:
    """The hosts of group ``limit`` (or a host of that name; all hosts when None), in order, once each."""
    group = limit or "all"
    hosts = _members(inventory, group)
    if not hosts and group in inventory.get("_meta", {}).get("hostvars", {}):
        hosts = [group]
    if not hosts:
        known = sorted(k for k in inventory if k not in ("_meta", "all", "ungrouped"))
        raise InventoryError(f"LIMIT={group} matches no host of the inventory "
                             f"(its groups: {', '.join(known) or 'none'})")
    return list(dict.fromkeys(hosts))


def groups_of(inventory: dict, host: str) -> set[str]:
    return {g for g in inventory if g not in ("_meta",) and host in _members(inventory, g)}


def hostvars_of(inventory: dict, host: str) -> dict:
    return inventory.get("_meta", {}).get("hostvars", {}).get(host, {})


def connect(inventory_path: str, name: str):
    """A testinfra host for one inventory host: pytest-testinfra's Ansible backend resolves the inventory
    variables into its ssh backend (None for a connection other than ssh/paramiko, refused in ``_ssh``)."""
    import testinfra  # here: the guide's build reads this package's tables without pytest-testinfra
    from testinfra.utils.ansible_runner import AnsibleRunner

    tools_on_path()
    runner = AnsibleRunner.get_runner(inventory_path)
    if "inventory" not in runner.__dict__:  # the backend's own ansible-inventory run, answered by the same command
        runner.__dict__["inventory"] = read_inventory(inventory_path)
    ansible = testinfra.get_host(f"ansible://{name}", ansible_inventory=inventory_path).backend
    return ansible.ansible_runner.get_host(name) or ansible


@dataclass(frozen=True)
class Result:
    rc: int
    stdout: str
    stderr: str


class Unreachable(RuntimeError):
    pass


def _ssh(host, command: str, stdin: str = "", seconds: int = STEP_SECONDS) -> Result:
    """The command through the host's ssh command line (testinfra builds it from the inventory), with stdin; the
    host ends it after ``seconds`` (``_as`` puts timeout in front of it), ssh here a little later."""
    inner = getattr(host, "backend", host)
    if not hasattr(inner, "_build_ssh_command"):
        raise Unreachable(f"verify runs over ssh; this host's connection is {getattr(inner, 'NAME', '?')!r}")
    cmd, args = inner._build_ssh_command(inner.get_command(command))  # noqa: SLF001 (testinfra 10's SshBackend)
    line = inner.quote(" ".join(cmd), *args)
    try:
        done = subprocess.run(line, shell=True, input=stdin.encode(), capture_output=True,  # noqa: S602
                              timeout=seconds + KILL_AFTER + 10, check=False)
    except subprocess.TimeoutExpired:
        return Result(TIMED_OUT, "", f"ssh had no answer within {seconds + KILL_AFTER + 10} s")
    out, err = done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    if done.returncode == 255:
        said = " ".join(err.split())[-300:] or "ssh exited with 255"
        raise Unreachable(f"ssh could not reach the host: {said}")
    return Result(done.returncode, out, err)


def _as(run_as: str, service_user: str | None, command: str, seconds: int = STEP_SECONDS) -> str:
    """The command as the login user, root or the server's user, under the host's time limit (timeout runs as the
    login user, outside sudo: the sudo rules allow only the checks themselves)."""
    limit = f"timeout -k {KILL_AFTER} {seconds} "
    if run_as == LOGIN:
        return limit + command
    user = "" if run_as == ROOT else f"-u {shlex.quote(service_user or '')} "
    return f"{limit}sudo -n {user}{command}"


def installed(host) -> dict[str, str]:
    """The sha256 of each check installed in ``INSTALLED`` on the host, by file name ({} when there is none)."""
    got = _ssh(host, _as(LOGIN, None, f"sh -c 'sha256sum {INSTALLED}/* 2>/dev/null || true'", LOOK_SECONDS),
               seconds=LOOK_SECONDS)
    pairs = [line.split() for line in got.stdout.splitlines()]
    return {path.rsplit("/", 1)[1]: sha for sha, path in (p for p in pairs if len(p) == 2)}


def copy_differs(snippet: str, found: dict[str, str]) -> str:
    """Why the host's installed copy of a snippet is not this runbook's ("" when it is)."""
    name = snippet.rsplit("/", 1)[-1]
    want = hashlib.sha256((SNIPPETS / snippet).read_bytes()).hexdigest()
    if name not in found:
        return (f"{INSTALLED}/{name} is not installed on the host: run snippets/verify/install-verify-account.sh "
                "there as root (the verify account's page section)")
    if found[name] != want:
        return (f"{INSTALLED}/{name} on the host is not this runbook's (sha256 {found[name][:12]}..., this checkout's "
                f"{want[:12]}...): run snippets/verify/install-verify-account.sh from this checkout there again")
    return ""


def reach(host) -> str:
    """Connect once; the login user's name (raises Unreachable with ssh's words)."""
    return _ssh(host, "id -un", seconds=LOOK_SECONDS).stdout.strip()


def sudo_refused(result: Result) -> bool:
    return any("sudo:" in line and "password" in line for line in result.stderr.splitlines())


def tokens(host) -> tuple[dict, str]:
    """Every token's slot and flags on the host by ``pkcsconf -t``, which does not log in (as zrprobe (group pkcs11)
    through sudo -n, else as the login user); ``({}, why)`` when it could not look, within ``LOOK_SECONDS``."""
    from zrunbook.verify.pins import parse_pkcsconf

    # as zrprobe (group pkcs11) (the sudo rule's runas), never as root: loading openCryptoki as root follows a
    # link a pkcs11 member planted in a token folder (CVE-2026-23893).
    got = _ssh(host, _as(ROOT, None, "-u zrprobe -g pkcs11 pkcsconf -t", LOOK_SECONDS), seconds=LOOK_SECONDS)
    sudo_said = ""
    if got.rc != 0 and sudo_refused(got):
        sudo_said = "sudo asked for a password (give the login user sudo rights or set ansible_become), and "
        got = _ssh(host, _as(LOGIN, None, "pkcsconf -t", LOOK_SECONDS), seconds=LOOK_SECONDS)
    if got.rc == TIMED_OUT:
        return {}, f"pkcsconf -t had no answer within {LOOK_SECONDS} s: {SLOTD_HUNG} (make doctor names why)"
    if got.rc != 0:
        return {}, f"{sudo_said}pkcsconf -t failed: {(got.stderr or got.stdout).strip()[-300:]}"
    return parse_pkcsconf(got.stdout), ""


def run_snippet(host, snippet: str, run_as: str, env: dict[str, str], args: list[str],
                service_user: str | None = None) -> Result:
    """A snippet on the host: its text to ``bash -s`` as the login user, or its installed copy through sudo as root
    or the server's user; the environment as exports ahead of it on standard input either way."""
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())
    quoted = " ".join(shlex.quote(a) for a in args)
    if run_as == LOGIN:
        return _ssh(host, _as(LOGIN, None, f"bash -s -- {quoted}"),
                    exports + (SNIPPETS / snippet).read_text(encoding="utf-8"))
    copy = f"{INSTALLED}/{snippet.rsplit('/', 1)[-1]}"
    return _ssh(host, "bash -s", exports + "exec " + _as(run_as, service_user, f"{copy} {quoted}") + "\n")


def run_step(host, step: Step, env: dict[str, str], args: list[str], service_user: str | None) -> Result:
    return run_snippet(host, step.snippet, step.run_as, env, args, service_user)
