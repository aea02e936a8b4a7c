"""A line of an /etc/cron.d file run the way Debian's cron (3.0pl1) runs it: the command after the five time fields
and the user, given to the file's SHELL (else /bin/sh) with ``-c``, as that user, in an environment that holds only
what cron sets (SHELL=/bin/sh, PATH=/usr/bin:/bin, HOME and LOGNAME of the user) and the file's own NAME=value
lines, which override them (crontab(5)). No terminal, no standard input. The check hosts have no cron daemon (no
package of it is in their locks): this is its environment, not its clock.

``syslog(host)`` starts a receiver on /dev/log (the host has no syslog daemon) so that ``logger`` in a line works
as on a server; ``logged(host, text)`` waits for text to reach it.
"""

from __future__ import annotations

import re
import shlex

from checks.hosts.util import copy_to, ok

CRON_DEFAULTS = {"SHELL": "/bin/sh", "PATH": "/usr/bin:/bin"}
SYSLOG = "/run/zr-syslog.txt"
_RECEIVER = """
import os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
if os.path.exists("/dev/log"):
    os.unlink("/dev/log")
s.bind("/dev/log.zr")
os.chmod("/dev/log.zr", 0o666)
os.rename("/dev/log.zr", "/dev/log")
with open(SYSLOG, "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536) + b"\\n")
""".replace("SYSLOG", repr(SYSLOG), 1)


def job(text: str) -> tuple[dict[str, str], str, str]:
    """(the file's NAME=value lines, the user, the command) of a cron.d file with one job line."""
    env, jobs = {}, []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$", line)
        if m:
            env[m.group(1)] = m.group(2)
            continue
        fields = line.split(None, 6)
        assert len(fields) == 7, f"not a cron.d job line: {line!r}"
        jobs.append((fields[5], fields[6]))
    assert len(jobs) == 1, f"expected one job line, found {len(jobs)}"
    return env, *jobs[0]


def run_line(host, cron_text: str, **override: str):
    """Run the file's job line now, as cron would at its time; returns testinfra's CommandResult."""
    env, user, command = job(cron_text)
    home = ok(host, f"getent passwd {shlex.quote(user)} | cut -d: -f6").strip()
    values = {**CRON_DEFAULTS, "HOME": home, "LOGNAME": user, **env, **override}
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in values.items())
    return host.run(f"cd {shlex.quote(home)} && runuser -u {shlex.quote(user)} -- env -i {assignments} "
                    f"{shlex.quote(values['SHELL'])} -c {shlex.quote(command)} </dev/null")


def syslog(host) -> None:
    if host.run("test -S /dev/log").rc == 0:
        return
    copy_to(host, _RECEIVER, "/tmp/zr-syslog.py")
    ok(host, f": > {SYSLOG} && setsid python3 /tmp/zr-syslog.py >/dev/null 2>&1 </dev/null &")
    ok(host, "timeout 30 sh -c 'until test -S /dev/log; do sleep 0.05; done'")  # the socket's creation: an event


def logged(host, text: str, timeout: int = 30) -> str:
    """The log once it holds text (logger sends before it exits; the receiver writes soon after): the receiver's
    file, or on a booted host, where /dev/log is journald's, the journal."""
    show = f"cat {SYSLOG}" if host.run(f"test -f {SYSLOG}").rc == 0 else "journalctl --no-pager -o cat"
    wait = f"until {show} | grep -qF -- {shlex.quote(text)}; do sleep 0.05; done"
    ok(host, f"timeout {timeout} bash -c {shlex.quote(wait)} || {{ {show}; exit 1; }}")
    return ok(host, show)
