"""Which pkcs11-provider settings change what the token costs Apache httpd: make bench WHAT=token-settings's data
(checks/ihs/bench_apache_token_settings.py).

``snippets/results/measured/token-settings.csv``: per host, key type and setting, the median, lowest and highest of
the runs in full TLS handshakes per server CPU-second, and how many of the first handshakes after the start failed.
The setting ``file`` is the same certificate type with its key in a file, measured in the same rounds; every other
setting is the token page's OpenSSL configuration with the change its name says (``SETTINGS``), with Debian's event
MPM except the settings in ``PREFORK`` (the page's step use-prefork-mpm-debian.sh).
``file_problems`` is the bench-token-settings checker's validator; ``sentence`` is what the results page states.
"""

from __future__ import annotations

from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook.facts import rows
from zrunbook.results import rates as rate_rows
from zrunbook.results.token_cost import KEY_NAMES, MIN_RUNS

DATA = SNIPPETS / "results" / "measured" / "token-settings.csv"
COLUMNS = ["host", "key", "setting", "runs", "handshakes_per_run", "median", "min", "max", "spread_percent",
           "first_handshakes_failed", "unit"]
PAGE = "the page's"
FILE = "file"
CACHE_KEYS = "pkcs11-module-cache-keys = false"  # the line of the page's configuration the settings change
# setting -> (the page's line replaced by, what the results page calls it)
SETTINGS = {
    PAGE: (CACHE_KEYS, "the page's settings (cache-keys false, cache-sessions unset: 5)"),
    "cache-sessions 10": (f"{CACHE_KEYS}\npkcs11-module-cache-sessions = 10", "cache-sessions 10"),
    "cache-keys true": ("pkcs11-module-cache-keys = true", "cache-keys true (pkcs11-provider's default)"),
    "cache-keys true, cache-sessions 10": ("pkcs11-module-cache-keys = true\npkcs11-module-cache-sessions = 10",
                                           "cache-keys true and cache-sessions 10"),
    "mpm prefork": (CACHE_KEYS, "the page's settings with the prefork MPM (use-prefork-mpm-debian.sh)"),
    "no-operation-state": (f"{CACHE_KEYS}\npkcs11-module-quirks = no-operation-state",
                           "the quirk no-operation-state (no C_GetOperationState)"),
}
# Scratch builds of pkcs11-provider (checks/ihs/p11prov_builds.py), never a page setting: the page's settings with
# the provider's library replaced by a build of upstream's source with Debian's flags. setting -> build name
SCRATCH_MODULE = "/opt/pkcs11-provider/{name}/pkcs11.so"
SCRATCH = {"build 1.0": "1.0", "build 1.0+fork-reset": "1.0+fork-reset", "build 1.2.0": "1.2.0"}
SCRATCH_LABELS = {"1.0": "pkcs11-provider 1.0 built here (the control)",
                  "1.0+fork-reset": "1.0 built here with the one-line fork-reset patch",
                  "1.2.0": "pkcs11-provider 1.2.0 built here"}
for _setting, _build in SCRATCH.items():
    SETTINGS[_setting] = (f"{CACHE_KEYS}\nmodule = {SCRATCH_MODULE.format(name=_build)}", SCRATCH_LABELS[_build])
# the settings httpd runs with the prefork MPM (the Apache page's step for first users); every other one with event
FILE_PREFORK = "file, mpm prefork"  # the file keys with the prefork MPM: the base of the setting "mpm prefork"
PREFORK = {"mpm prefork", FILE_PREFORK}
UNIT = rate_rows.UNIT


def name(r: dict) -> str:
    return f"{r['host']} {r['key']} {r['setting']}"


def file_problems(path: Path) -> list[str]:
    data, out = rate_rows.checked_rows(path, COLUMNS, MIN_RUNS, name)
    for r in data:
        if r["setting"] not in (*SETTINGS, FILE, FILE_PREFORK):
            out.append(f"{path.name}: {name(r)}: the setting must be one of {[*SETTINGS, FILE, FILE_PREFORK]}")
        if not r["first_handshakes_failed"].isdigit():
            out.append(f"{path.name}: {name(r)}: first_handshakes_failed must be a count")
    for host, key in sorted({(r["host"], r["key"]) for r in data}):
        settings = {r["setting"] for r in data if (r["host"], r["key"]) == (host, key)}
        if FILE not in settings or PAGE not in settings:
            out.append(f"{path.name}: {host} {key}: each setting needs the file figure and the page's figure of "
                       f"the same rounds beside it (has {sorted(settings)})")
    return out


def merge(path: Path, new: list[dict]) -> None:
    """Write new rows into path, keeping the rows of every host the new rows do not measure."""
    rate_rows.merge(path, COLUMNS, new, key=lambda r: (r["host"],),
                    order=lambda r: (r["host"], r["key"], r["setting"]))


def row(host: str, key: str, setting: str, per_run: int, rates: list[float], failed: int) -> dict:
    return {"host": host, "key": key, "setting": setting, "handshakes_per_run": per_run,
            **rate_rows.summary(rates), "first_handshakes_failed": failed, "unit": UNIT}


def sentence(path: Path = DATA) -> str:
    """Per host and key: each setting's median as a share of the file path's, with the spread of its runs."""
    data = rows(path)
    parts = []
    for host, key in sorted({(r["host"], r["key"]) for r in data}):
        mine = {r["setting"]: r for r in data if (r["host"], r["key"]) == (host, key)}
        file_rate = float(mine[FILE]["median"])
        said = []
        for setting, (_, label) in SETTINGS.items():
            if setting in SCRATCH:  # scratch_sentence says those, against their control
                continue
            if setting in mine:
                r = mine[setting]
                failed = int(r["first_handshakes_failed"])
                base, of = file_rate, ""
                if setting in PREFORK and FILE_PREFORK in mine:  # prefork against the file keys with prefork
                    base = float(mine[FILE_PREFORK]["median"])
                    of = (f" of the file path with prefork ({base:.0f}, spread {mine[FILE_PREFORK]['spread_percent']} "
                          f"%; {100 * base / file_rate:.0f} % of the file path with event)")
                said.append(f"{label} {100 * float(r['median']) / base:.0f} %{of} (spread {r['spread_percent']} %"
                            + (f"; {failed} of the first handshakes failed" if failed else "") + ")")
        parts.append(f"{host}, {KEY_NAMES.get(key, key)}, of the file path's {file_rate:.0f} (spread "
                     f"{mine[FILE]['spread_percent']} %): " + ", ".join(said))
    return "; ".join(parts) + ". " + verdict(data)


def prefork_sentence(path: Path = DATA) -> str:
    """What the prefork MPM costs the token site, per host and key: its rate against the same site with the event
    MPM, and against the file keys with prefork where measured."""
    data = rows(path)
    parts = []
    for host, key in sorted({(r["host"], r["key"]) for r in data}):
        mine = {r["setting"]: r for r in data if (r["host"], r["key"]) == (host, key)}
        if "mpm prefork" not in mine:
            continue
        prefork = mine["mpm prefork"]
        rate = float(prefork["median"])
        said = (f"{KEY_NAMES.get(key, key)} on {host}: {rate:.0f} full handshakes per server CPU-second (spread "
                f"{prefork['spread_percent']} %), {100 * rate / float(mine[PAGE]['median']):.0f} % of the same site "
                "with the event MPM")
        if FILE_PREFORK in mine:
            said += f" and {100 * rate / float(mine[FILE_PREFORK]['median']):.0f} % of the file key with prefork"
        parts.append(said)
    return "; ".join(parts) if parts else "not measured yet"


def scratch_sentence(path: Path = DATA) -> str:
    """The scratch builds per host and key: each as a share of the file path, and the patch and 1.2.0 against the
    control (1.0 built the same way), which is the change's own effect."""
    data = rows(path)
    parts = []
    for host, key in sorted({(r["host"], r["key"]) for r in data}):
        mine = {r["setting"]: r for r in data if (r["host"], r["key"]) == (host, key)}
        if not all(s in mine for s in SCRATCH):
            continue
        file_rate, control = float(mine[FILE]["median"]), float(mine["build 1.0"]["median"])
        said = [f"Debian's library {100 * float(mine[PAGE]['median']) / file_rate:.0f} % of the file path"]
        for setting, build in SCRATCH.items():
            r = mine[setting]
            rate = float(r["median"])
            said.append(f"{SCRATCH_LABELS[build]} {100 * rate / file_rate:.0f} % (spread {r['spread_percent']} %)"
                        + ("" if build == "1.0" else f", {100 * (rate / control - 1):+.0f} % against the control"))
        parts.append(f"{KEY_NAMES.get(key, key)} on {host}: " + "; ".join(said))
    return ". ".join(parts) if parts else "not measured yet"


def page_sentence(path: Path = DATA) -> str:
    """The page's settings as a share of the file path, per host and key, with the runs and spreads."""
    data = rows(path)
    parts = []
    for host, key in sorted({(r["host"], r["key"]) for r in data}, key=lambda hk: (hk[1] != "rsa2048", hk)):
        mine = {r["setting"]: r for r in data if (r["host"], r["key"]) == (host, key)}
        page, file_ = mine[PAGE], mine[FILE]
        share = 100 * float(page["median"]) / float(file_["median"])
        parts.append(f"with the {KEY_NAMES.get(key, key)} key {share:.0f} % of the same site's rate with the key in a "
                     f"file (median of {page['runs']} interleaved runs; spreads {page['spread_percent']} % and "
                     f"{file_['spread_percent']} %)")
    return " and ".join(parts)


def scratch_verdict(path: Path = DATA) -> str:
    """Whether the patched 1.0 or 1.2.0 beat the control by more than the wider spread of the two, per key."""
    data = rows(path)
    changes, beat = [], []
    for host, key in sorted({(r["host"], r["key"]) for r in data}):
        mine = {r["setting"]: r for r in data if (r["host"], r["key"]) == (host, key)}
        if not all(s in mine for s in SCRATCH):
            continue
        control = mine["build 1.0"]
        for setting in ("build 1.0+fork-reset", "build 1.2.0"):
            change = 100 * (float(mine[setting]["median"]) / float(control["median"]) - 1)
            changes.append(change)
            if change > max(float(mine[setting]["spread_percent"]), float(control["spread_percent"])):
                beat.append(f"{SCRATCH_LABELS[SCRATCH[setting]]} with {KEY_NAMES.get(key, key)} ({change:+.0f} %)")
    if not changes:
        return "not measured yet"
    said = f"against the control, the changes ranged from {min(changes):+.0f} % to {max(changes):+.0f} %"
    if beat:
        return said + "; beyond the spread of the runs: " + ", ".join(beat)
    return said + ", and none was a gain beyond the spread of the runs"


def outside(data: list[dict]) -> list[str]:
    """The settings whose median lies outside the range of the page's own runs, per host and key."""
    out = []
    for host, key in sorted({(r["host"], r["key"]) for r in data}):
        mine = {r["setting"]: r for r in data if (r["host"], r["key"]) == (host, key)}
        low, high = float(mine[PAGE]["min"]), float(mine[PAGE]["max"])
        out += [f"{s} with {KEY_NAMES.get(key, key)} on {host}" for s in SETTINGS if s not in SCRATCH
                if s != PAGE and s in mine and not low <= float(mine[s]["median"]) <= high]
    return out


def verdict(data: list[dict]) -> str:
    moved = outside(data)
    if not moved:
        return ("No setting's median lies outside the range of the page's own runs: in these rounds no setting "
                "changed the ratio by more than the runs vary, so the page keeps its settings")
    return "Outside the range of the page's own runs: " + ", ".join(moved)
