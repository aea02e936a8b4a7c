"""Values the verify page quotes, computed from make bench WHAT=verify's data (zrunbook/verify/bench.py)."""

from __future__ import annotations

from zrunbook import SNIPPETS
from zrunbook.verify import bench

DATA = SNIPPETS / "results/verify/debian13-amd64-scaling.csv"
DEPENDS_ON = ["snippets/results/verify/debian13-amd64-scaling.csv", "zrunbook/verify/bench.py"]


def scaling_sentence() -> str:
    s = bench.summary(DATA)
    parts = [f"{n} target{'s' if n > 1 else ''} {v['wall']:.1f} s ({v['per_host']:.2f} s a host, spread "
             f"{v['spread']:.0%})" for n, v in s.items()]
    one = s[1]["wall"]
    return (f"make bench WHAT=verify timed make verify on this machine against the Apache token site on 1, 2, 4 and "
            f"8 amd64 container targets, {min(v['runs'] for v in s.values())} runs each, one xdist worker per "
            f"host; the median of the whole command was {'; '.join(parts)}. One host, every step: {one:.1f} s, "
            "within the 30 s the runbook allows one host.")
