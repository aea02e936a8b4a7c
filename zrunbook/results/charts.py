"""Charts for the results chapter, drawn at build time from the CSV files under ``snippets/results/``.

``render_all(outdir)`` writes one PNG (150 dpi, for HTML and PDF) per chart into ``outdir`` and returns
their paths; pages include them as ``/_charts/<name>.png``. The numbers come only from the CSV files
(the same files the checks validate and the pages show as tables), so a chart never disagrees with its
table. matplotlib with the Agg backend: no display needed.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from zrunbook import SNIPPETS
from zrunbook.facts import rows as csv_rows
from zrunbook.results import token_cost

STUDIES = SNIPPETS / "results" / "studies"
MEASURED = SNIPPETS / "results" / "measured" / "debian13-amd64"
DPI = 150
MARK = {"about": "≈", "almost": "almost ", "more than": ">", "below": "<", "over": ">", "up to": "up to ",
        "exactly": ""}
COLOURS = ["#1f5f8b", "#d9822b", "#3c8d40", "#8e44ad", "#b03a2e", "#7f8c8d"]
DEPENDS_ON = sorted(str(p.relative_to(SNIPPETS.parent)) for p in (SNIPPETS / "results").rglob("*.csv"))


def _save(fig, outdir: Path, name: str) -> Path:
    path = outdir / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return path


def _ratio_bars(rows: list[dict], label, colour_of, title: str, xlabel: str, outdir: Path, name: str) -> Path:
    """Horizontal bars for ratios stated in words; a range is drawn as a bar with a whisker to its top."""
    fig, ax = plt.subplots(figsize=(8.5, 0.42 * len(rows) + 1.4))
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows, strict=False):
        v = float(r["value"])
        hi = float(r["value_high"]) if r.get("value_high") else None
        ax.barh(y, v, color=colour_of(r), height=0.62)
        if hi:
            ax.plot([v, hi], [y, y], color="black", linewidth=1.2)
            ax.plot([hi, hi], [y - 0.18, y + 0.18], color="black", linewidth=1.2)
        text = f"{MARK.get(r['qualifier'], '')}{v:g}" + (f" to {hi:g}" if hi else "")
        ax.text((hi or v) + 0.04, y, text, va="center", fontsize=8)
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle=":")
    ax.set_yticks(ys, [label(r) for r in rows], fontsize=8)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.set_title(title, fontsize=10)
    ax.set_xlim(0, max(float(r.get("value_high") or r["value"]) for r in rows) * 1.18)
    ax.spines[["top", "right"]].set_visible(False)
    return _save(fig, outdir, name)


SLIDES = "ibm-was8-ssl-2013-slides"  # the study's slides (facts/documents.csv); other rows cite the paper


def _was(outdir: Path) -> list[Path]:
    rows = csv_rows(STUDIES / "was-2013-daytrader.csv")
    colour = {"1 WAS HTTPS": COLOURS[0], "2 IHS HTTPS": COLOURS[1]}

    def label(r):
        paper = "slides" if r["source"].split()[0] == SLIDES else "paper"
        return f"S{r['scenario'][0]} {r['key_bits']} · {r['setup']} ({paper})"

    out = []
    tput = [r for r in rows if r["metric"] == "throughput"]
    out.append(_ratio_bars(tput, label, lambda r: colour[r["scenario"]],
                           "WAS 2013: DayTrader SSL throughput, Software = 1 (S1 WAS, S2 IHS)",
                           "throughput relative to the Software setup", outdir, "was-2013-throughput"))
    cost = [r for r in rows if r["unit"] == "ratio to baseline" and r["metric"] != "throughput"]
    out.append(_ratio_bars(cost, lambda r: f"{label(r)} · {r['metric']}", lambda r: colour[r["scenario"]],
                           "WAS 2013: CPU cost per transaction and response time, Software = 1",
                           "relative to the Software setup (lower is better)", outdir, "was-2013-cost-and-response"))
    return out


def _webseal_jsse(outdir: Path) -> list[Path]:
    out = []
    for file, name, title in (("webseal-2007.csv", "webseal-2007-ratios", "WebSEAL 2007: throughput ratios"),
                              ("jsse-cex2a.csv", "jsse-cex2a-ratios", "JSSE with CPACF and CEX2A: ratios")):
        rows = [r for r in csv_rows(STUDIES / file) if r["unit"] == "ratio to baseline"]
        scenarios = sorted({r["scenario"] for r in rows})

        def colour(r, scenarios=scenarios):
            return COLOURS[scenarios.index(r["scenario"]) % len(COLOURS)]

        out.append(_ratio_bars(rows, lambda r: f"{r['setup']} vs {r['baseline']} ({r['payload']})", colour,
                               title, "relative to the baseline named on the left", outdir, name))
    return out


def _cics(outdir: Path) -> Path:
    rows = csv_rows(STUDIES / "cics-tg-2015-tps.csv")
    tables = {}
    for r in rows:
        tables.setdefault((r["scenario"], r["payload"]), {}).setdefault(r["protocol"], []).append(
            (int(r["clients"]), float(r["value"])))
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4), sharex=True, sharey=True)
    for ax, ((scenario, payload), protos) in zip(axes.flat, tables.items(), strict=False):
        for i, (proto, points) in enumerate(protos.items()):
            xs, ys = zip(*sorted(points), strict=False)
            ax.plot(xs, ys, marker="o", markersize=3, color=COLOURS[i], label=proto.replace("SSL_RSA_WITH_", ""))
        ax.set_title(f"scenario {scenario}, {payload}", fontsize=9)
        ax.legend(fontsize=6.5, loc="upper left")
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("clients", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("transactions per second", fontsize=9)
    fig.suptitle("CICS TG 2015: transactions per second by clients", fontsize=10)
    return _save(fig, outdir, "cics-tg-2015-tps")


def _measured(outdir: Path) -> list[Path]:
    summary = MEASURED / "summary.csv"
    if not summary.is_file():
        return []
    rows = csv_rows(summary)
    setups = list(dict.fromkeys(r["setup"] for r in rows))
    out = []
    tests = [("full-handshake", "rsa2048"), ("full-handshake", "rsa4096"), ("full-handshake", "ecdsa-p256"),
             ("full-handshake-openssl-s_server", "rsa2048"), ("full-handshake-openssl-s_server-rsa-kex", "rsa2048"),
             ("full-handshake-get-4k", "rsa2048"), ("resumed-handshake-get-4k", "rsa2048")]
    names = ["full\nRSA 2048", "full\nRSA 4096", "full\nECDSA P-256", "full RSA 2048\nopenssl s_server",
             "TLS 1.2 RSA kex\nopenssl s_server",
             "full RSA 2048\n+ GET 4 KB", "resumed\n+ GET 4 KB"]
    fig, ax = plt.subplots(figsize=(10, 4.6))
    width = 0.8 / len(setups)
    for i, s in enumerate(setups):
        for j, (test, key) in enumerate(tests):
            r = next((r for r in rows if (r["setup"], r["test"], r["key"]) == (s, test, key)), None)
            if r is None:
                continue
            x = j + (i - (len(setups) - 1) / 2) * width
            med, lo, hi = float(r["median"]), float(r["min"]), float(r["max"])
            ax.bar(x, med, width * 0.95, color=COLOURS[i], label=s if j == 0 else None)
            ax.plot([x, x], [lo, hi], color="black", linewidth=1)
            if r["bound_median"] and key != "ecdsa-p256":
                ax.plot([x - width / 2, x + width / 2], [float(r["bound_median"])] * 2, color="black", linewidth=2)
    ax.set_xticks(range(len(tests)), names, fontsize=8)
    ax.set_ylabel("handshakes per server CPU-second", fontsize=9)
    ax.set_title("This build machine: handshakes per server CPU-second (median, min to max); "
                 "black bar = RSA signs/s on one core", fontsize=9)
    ax.legend(fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    out.append(_save(fig, outdir, "measured-handshakes"))

    fig, ax = plt.subplots(figsize=(9, 4.2))
    payloads = ["4k", "32k", "2.9m"]
    for i, s in enumerate(setups):
        for j, p in enumerate(payloads):
            r = next((r for r in rows if (r["setup"], r["test"], r["payload"]) == (s, "bulk", p)), None)
            if r is None:
                continue
            x = j + (i - (len(setups) - 1) / 2) * width
            ax.bar(x, float(r["median"]), width * 0.95, color=COLOURS[i], label=s if j == 0 else None)
            ax.plot([x, x], [float(r["min"]), float(r["max"])], color="black", linewidth=1)
            if r["bound_median"]:
                ax.plot([x - width / 2, x + width / 2], [float(r["bound_median"])] * 2, color="black", linewidth=2)
    ax.set_yscale("log")
    ax.set_xticks(range(len(payloads)), ["4 KB", "32 KB", "2.9 MB"], fontsize=9)
    ax.set_ylabel("MB per server CPU-second (log)", fontsize=9)
    ax.set_title("This build machine: bulk transfer per server CPU-second; black bar = AES-GCM MB/s on one core",
                 fontsize=9)
    ax.legend(fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    out.append(_save(fig, outdir, "measured-bulk"))
    return out


def _token_cost(outdir: Path) -> list[Path]:
    """Token against file, per host and key type: bars at the median, a line from the lowest to the highest run."""
    if not token_cost.DATA.is_file():
        return []
    pairs = sorted(token_cost.figures().items())
    fig, ax = plt.subplots(figsize=(8.5, 0.9 * len(pairs) + 1.4))
    for i, (_, pair) in enumerate(pairs):
        for j, place in enumerate(("token", "file")):
            r = pair[place]
            y = len(pairs) - 1 - i + (0.2 if place == "token" else -0.2)
            med, low, high = float(r["median"]), float(r["min"]), float(r["max"])
            name = "key in the token" if place == "token" else "key in a file"
            ax.barh(y, med, height=0.38, color=COLOURS[j], label=name if i == 0 else None)
            ax.plot([low, high], [y, y], color="black", linewidth=1.2)
            ax.text(high * 1.01, y, f"{med:.0f}", va="center", fontsize=8)
    ax.set_yticks(range(len(pairs))[::-1],
                  [f"{token_cost.SERVER_NAMES.get(server, server)}, {host}\n{token_cost.KEY_NAMES.get(key, key)}"
                   for (host, server, key), _ in pairs], fontsize=8)
    ax.set_xlabel(token_cost.UNIT, fontsize=9)
    ax.set_title("Key in the openCryptoki token against a key file", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.spines[["top", "right"]].set_visible(False)
    return [_save(fig, outdir, "token-cost")]


def render_all(outdir: Path) -> list[Path]:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    return [*_was(outdir), *_webseal_jsse(outdir), _cics(outdir), *_measured(outdir), *_token_cost(outdir)]


if __name__ == "__main__":
    for p in render_all(Path("docs/_charts")):
        print(p)
