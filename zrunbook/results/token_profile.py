"""PKCS #11 calls per TLS handshake with the key in the token: what checks/results/test_token_profile.py measures.

OpenSC's pkcs11-spy sits between pkcs11-provider and openCryptoki and logs every call with the process that made
it; the test writes a marker line into the same log before each handshake. ``segments(log)`` cuts the log at the
markers into one list of calls per handshake (each call: name, process id, return code); ``split_first(segs)``
puts aside each worker's first handshake (it logs in and finds the key) from the steady state;
``per_handshake(segs)`` is the one count per call name that every handshake of a group made, or an error naming
the handshakes that differ. ``table(columns)`` writes
``snippets/results/measured/token-profile.csv``: one row per call, one column per key type and phase.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from zrunbook import SNIPPETS

REL = "results/measured/token-profile.csv"
DATA = SNIPPETS / REL
MARK = "#### zr-handshake"
# the calls the profile names whether or not a handshake makes them (issue 46), in this order; any other call
# a handshake makes gets a row after them
NAMED = ["C_Initialize", "C_Finalize", "C_Login", "C_GetTokenInfo", "C_OpenSession", "C_CloseSession",
         "C_GetSessionInfo", "C_FindObjectsInit", "C_FindObjects", "C_FindObjectsFinal", "C_GetAttributeValue",
         "C_SignInit", "C_Sign", "C_SignUpdate", "C_SignFinal", "C_GetOperationState"]
ALL = "all calls"
FAILED = "calls that returned an error"
SIGNATURES = ("C_Sign", "C_SignFinal")  # the calls that return a signature (one-part and multi-part)

_CALL = re.compile(r"^\d+: (C_\w+)$")
_PID = re.compile(r"^P:(\d+);")
_RETURNED = re.compile(r"^Returned:\s+(\d+)\b")


@dataclass(frozen=True)
class Call:
    name: str
    pid: int
    rv: int


def segments(log: str) -> list[list[Call]]:
    """The calls logged after each marker line, up to the next marker (the text before the first is dropped)."""
    out: list[list[Call]] = []
    name, pid = None, None
    for line in log.splitlines():
        if line.startswith(MARK):
            out.append([])
            name = pid = None
        elif m := _CALL.match(line):
            name, pid = m.group(1), None
        elif (m := _PID.match(line)) and name:
            pid = int(m.group(1))
        elif (m := _RETURNED.match(line)) and name and out:
            out[-1].append(Call(name, pid if pid is not None else -1, int(m.group(1))))
            name = pid = None
    return out


def worker(seg: list[Call]) -> int:
    """The one process that made a handshake's calls (an assertion error if none or several did)."""
    pids = {c.pid for c in seg}
    assert len(pids) == 1, f"a handshake's calls came from processes {sorted(pids)}, not from one worker"
    return pids.pop()


def split_first(segs: list[list[Call]]) -> tuple[list[list[Call]], list[list[Call]]]:
    """(each worker's first handshake, every later handshake)."""
    seen: set[int] = set()
    first, steady = [], []
    for seg in segs:
        pid = worker(seg)
        (steady if pid in seen else first).append(seg)
        seen.add(pid)
    return first, steady


def counts(seg: list[Call]) -> Counter:
    c = Counter(call.name for call in seg)
    c[ALL] = len(seg)
    c[FAILED] = sum(1 for call in seg if call.rv != 0)
    return c


def per_handshake(segs: list[list[Call]], what: str) -> Counter:
    """The counts every handshake in segs made; an assertion error if any two differ."""
    assert segs, f"no handshake for {what}"
    kinds = Counter(tuple(sorted(counts(s).items())) for s in segs)
    if len(kinds) > 1:
        shown = "; ".join(f"{n} handshake(s): {dict(k)}" for k, n in kinds.most_common())
        raise AssertionError(f"{what}: the handshakes made different calls: {shown}")
    return counts(segs[0])


def table(columns: dict[str, Counter]) -> str:
    """The CSV: a row per call (NAMED first, then any other call in name order, then the totals)."""
    seen = set().union(*columns.values()) - {ALL, FAILED}
    names = NAMED + sorted(seen - set(NAMED)) + [ALL, FAILED]
    lines = [",".join(["call", *columns])]
    lines += [",".join([n, *(str(c.get(n, 0)) for c in columns.values())]) for n in names]
    return "\n".join(lines) + "\n"
