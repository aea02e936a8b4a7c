"""Db2's enforced minimums for the Linux IPC kernel parameters, and the sysctl.d files that set them.

The minimums (per GB of RAM or fixed) and the defaults of a current kernel's fresh IPC namespace are
in ``facts/db2/ipc-minimums.csv``; the reference table on the page is rendered from it. A
sysctl.d snippet states the memory size it was computed for in its header
(``... for a host with 64 GB of RAM ...``); ``stated_ram_gb`` reads it from there, so the number is
written once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import SNIPPETS
from zrunbook import facts as facts_tables

FACTS = FACTS_ROOT / "db2" / "ipc-minimums.csv"
CURRENT_CONF = "db2/kernel/90-db2-ipc.conf"
STUDY_CONF = "db2/kernel/90-db2-ipc-2013-sles11.conf"
# IPC sysctls are per IPC namespace; anything else would change the whole machine (see conftest.py).
IPC_NAMESPACED = {"kernel.shmmax", "kernel.shmall", "kernel.shmmni", "kernel.shm_rmid_forced",
                  "kernel.sem", "kernel.msgmni", "kernel.msgmax", "kernel.msgmnb"}


@dataclass(frozen=True)
class Minimum:
    parameter: str
    sysctl: str
    field: int | None  # 1-based position in kernel.sem
    factor: int
    per: str  # "GB" or "fixed"
    kernel_default: int
    kernel_max: int | None  # IPCMNI for identifier counts (32768 unless booted with ipcmni_extend)

    def value(self, ram_gb: int) -> int:
        return self.factor * ram_gb if self.per == "GB" else self.factor


def minimums(path: Path = FACTS) -> list[Minimum]:
    return [Minimum(r["parameter"], r["sysctl"], int(r["field"]) if r["field"] else None,
                    int(r["factor"]), r["per"], int(r["kernel_default"]),
                    int(r["kernel_max"]) if r["kernel_max"] else None) for r in facts_tables.load(path)]


def parse_conf(text: str) -> dict[str, str]:
    """key -> value (whitespace normalised) of a sysctl.d file; later lines win, as sysctl applies them."""
    out: dict[str, str] = {}
    for no, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"line {no}: {line!r} is not key = value")
        out[key.strip().lstrip("-").replace("/", ".")] = " ".join(value.split())
    return out


def conf_values(rel: str) -> dict[str, str]:
    return parse_conf((SNIPPETS / rel).read_text(encoding="utf-8"))


def stated_ram_gb(rel: str) -> int:
    text = (SNIPPETS / rel).read_text(encoding="utf-8")
    found = re.search(r"^#.*for a host with (\d+) GB of RAM", text, re.M)
    if not found:
        raise ValueError(f"snippets/{rel} does not state 'for a host with N GB of RAM' in its header")
    return int(found.group(1))


def parameter_values(values: dict[str, str]) -> dict[str, int]:
    """PARAMETER -> number from sysctl key/values (kernel.sem split into its four fields)."""
    out: dict[str, int] = {}
    for m in minimums():
        if m.sysctl not in values:
            continue
        fields = values[m.sysctl].split()
        out[m.parameter] = int(fields[m.field - 1] if m.field else fields[0])
    return out


def shortfalls(effective: dict[str, int], ram_gb: int) -> list[str]:
    """Parameters below Db2's enforced minimum for ram_gb (a missing parameter counts as below)."""
    problems = []
    for m in minimums():
        have = effective.get(m.parameter)
        if have is None or have < m.value(ram_gb):
            problems.append(f"{m.parameter} ({m.sysctl}) is {have}, Db2 needs at least {m.value(ram_gb)} "
                            f"for {ram_gb} GB of RAM")
    return problems


def largest_ram_gb_within_kernel_limits() -> int:
    """The most RAM (GB) for which every per-GB minimum still fits under the kernel's maximum."""
    return min(m.kernel_max // m.factor for m in minimums() if m.kernel_max and m.per == "GB")
