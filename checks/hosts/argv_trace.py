"""Every program's arguments while a step runs, as any user on the host reads them in ps (/proc/PID/cmdline).

``traced(host)`` builds the preload library ``exec_argv_log.c`` with the host's gcc, names it in
``/etc/ld.so.preload`` (so the dynamic loader puts it into every process that starts, whoever runs it and whatever
its environment), and yields a list that holds, after the block, one ``Exec(pid, path, args)`` per program started
in it. Unlike sampling /proc, it misses no process for being short-lived: its verdict does not depend on timing.
Statically linked programs do not load it; none of the steps it watches here is one (``seen`` says which ran).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from checks.hosts.util import copy_to, ok

SOURCE = Path(__file__).with_name("exec_argv_log.c")
LIB = "/usr/local/lib/zr-exec-argv-log.so"
LOG = "/run/zr-exec-argv.log"


@dataclass(frozen=True)
class Exec:
    pid: int
    path: str
    args: tuple[str, ...]


@contextlib.contextmanager
def traced(host):
    copy_to(host, SOURCE.read_text(encoding="utf-8"), "/tmp/zr-exec-argv-log.c")
    ok(host, f"gcc -shared -fPIC -O2 -o {LIB} /tmp/zr-exec-argv-log.c -ldl && : > {LOG} && chmod 0666 {LOG}"
             f" && echo {LIB} > /etc/ld.so.preload")
    execs: list[Exec] = []
    try:
        yield execs
    finally:
        ok(host, "rm -f /etc/ld.so.preload")
        for line in filter(None, host.run(f"cat {LOG}").stdout.split("\n")):  # (splitlines would split at 0x1d)
            pid, path, args = (line.split("\t", 2) + ["", ""])[:3]
            execs.append(Exec(int(pid), path, tuple(a.replace("\x1d", "\n") for a in args.split("\x1f"))))
        ok(host, f"rm -f {LOG}")  # the record holds every argument (a public key's modulus among them): not left behind


def holding(execs: list[Exec], secret: str) -> list[Exec]:
    """The programs started with secret among their arguments (whole or inside one)."""
    return [e for e in execs if any(secret in a for a in e.args)]


def seen(execs: list[Exec]) -> set[str]:
    """The names of the programs started (the last part of each path)."""
    return {e.path.rsplit("/", 1)[-1] for e in execs}
