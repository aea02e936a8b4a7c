"""Where the CPU of a handshake goes with the key in the token and in a file: make bench WHAT=token-perf's data
(checks/ihs/bench_apache_token_perf.py, perf sampling httpd's processes on the amd64 host).

``snippets/results/measured/token-perf.csv``: per host, key type, place of the key and library (perf's "dso"),
the samples perf took in that library over every run, their share of all of httpd's samples, and that share of
httpd's CPU time per handshake in microseconds (httpd's CPU time counted from /proc over the same handshakes); the
last column has each run's own µs per handshake (all libraries), for the spread. ``file_problems`` is the
bench-token-perf checker's validator; ``sentence`` is what the results page states: how much more CPU a handshake
takes with the key in the token, and in which libraries the difference lies.
"""

from __future__ import annotations

from pathlib import Path

from zrunbook import ROOT, SNIPPETS
from zrunbook.facts import measured, rows
from zrunbook.results import rates as rate_rows
from zrunbook.results.token_cost import KEY_NAMES, MIN_RUNS

DATA = SNIPPETS / "results" / "measured" / "token-perf.csv"
FIGURES = ROOT / "docs" / "results" / "figures"  # the bench's flame graphs (the results page shows them)
COLUMNS = ["host", "key", "key_in", "library", "samples", "share_percent", "cpu_us_per_handshake", "handshakes",
           "runs_us_per_handshake"]
PLACES = ("token", "file")
MIN_SAMPLES = 1000  # fewer samples than this per key and place say too little about shares of a few percent
# perf's names for where the samples fell, as the page names them (the rest keep perf's name)
NAMES = {"[kernel.kallsyms]": "the kernel", "libcrypto.so.3": "OpenSSL's libcrypto", "libssl.so.3": "OpenSSL's libssl",
         "pkcs11.so": "pkcs11-provider", "libopencryptoki.so.0.0.0": "openCryptoki's API library",
         "libpkcs11_sw.so.0.0.0": "openCryptoki's soft token", "libc.so.6": "the C library", "mod_ssl.so": "mod_ssl"}


def name(r: dict) -> str:
    return f"{r['host']} {r['key']} {r['key_in']} {r['library']}"


def file_problems(path: Path) -> list[str]:
    data, problems = measured(path, COLUMNS)
    if problems:
        return problems
    out = []
    for r in data:
        if r["key_in"] not in PLACES:
            out.append(f"{path.name}: {name(r)}: key_in must be one of {list(PLACES)}")
        if not (r["samples"].isdigit() and r["handshakes"].isdigit()):
            out.append(f"{path.name}: {name(r)}: samples and handshakes must be counts")
    if out:
        return out
    for group in sorted({(r["host"], r["key"], r["key_in"]) for r in data}):
        mine = [r for r in data if (r["host"], r["key"], r["key_in"]) == group]
        total = sum(int(r["samples"]) for r in mine)
        where = f"{path.name}: {' '.join(group)}"
        if total < MIN_SAMPLES:
            out.append(f"{where}: {total} samples in all; at least {MIN_SAMPLES} are needed")
            continue
        for r in mine:
            if abs(100 * int(r["samples"]) / total - float(r["share_percent"])) > 0.15:
                out.append(f"{where}: {r['library']}: share_percent {r['share_percent']} is not its samples' share "
                           f"of {total}")
        us = sum(float(r["cpu_us_per_handshake"]) for r in mine)
        runs = {r["runs_us_per_handshake"] for r in mine}
        each = next(iter(runs)).split()
        if len(runs) != 1 or not all(x.isdigit() for x in each):
            out.append(f"{where}: runs_us_per_handshake must be the same list of whole µs on every row")
        elif len(each) < MIN_RUNS:
            out.append(f"{where}: {len(each)} run(s); at least {MIN_RUNS} are needed for a spread")
        elif abs(sum(map(int, each)) / len(each) - us) > 1.5:
            out.append(f"{where}: the libraries' µs add up to {us:.1f}, not to the mean of the runs {each}")
        for r in mine:
            if abs(us * float(r["share_percent"]) / 100 - float(r["cpu_us_per_handshake"])) > 0.6:
                out.append(f"{where}: {r['library']}: cpu_us_per_handshake {r['cpu_us_per_handshake']} is not its "
                           f"share of the {us:.0f} µs per handshake")
    for host, key in sorted({(r["host"], r["key"]) for r in data}):
        places = {r["key_in"] for r in data if (r["host"], r["key"]) == (host, key)}
        if places != set(PLACES):
            out.append(f"{path.name}: {host} {key}: the token and the file figures come from the same run; has "
                       f"{sorted(places)}")
    return out


def per_library(data: list[dict], host: str, key: str, place: str) -> dict[str, float]:
    return {r["library"]: float(r["cpu_us_per_handshake"]) for r in data
            if (r["host"], r["key"], r["key_in"]) == (host, key, place)}


def spread(data: list[dict], host: str, key: str, place: str) -> str:
    runs = sorted(int(x) for x in next(r["runs_us_per_handshake"] for r in data
                                       if (r["host"], r["key"], r["key_in"]) == (host, key, place)).split())
    return f"{runs[0]}–{runs[-1]} µs" if len(runs) > 1 else f"{runs[0]} µs"


def differences(data: list[dict], host: str, key: str) -> list[tuple[str, float]]:
    """Per library, the token's µs per handshake less the file's, largest first."""
    token, file_ = per_library(data, host, key, "token"), per_library(data, host, key, "file")
    diff = {lib: token.get(lib, 0.0) - file_.get(lib, 0.0) for lib in {*token, *file_}}
    return sorted(diff.items(), key=lambda kv: -abs(kv[1]))


def sentence(path: Path = DATA) -> str:
    if not path.exists():
        return "not measured yet"
    data = rows(path)
    parts = []
    for host, key in sorted({(r["host"], r["key"]) for r in data}, key=lambda hk: (hk[1] != "rsa2048", hk)):
        token = sum(per_library(data, host, key, "token").values())
        file_ = sum(per_library(data, host, key, "file").values())
        top = [f"{NAMES.get(lib, lib)} {d:+.0f} µs" for lib, d in differences(data, host, key)[:5]]
        parts.append(f"{KEY_NAMES.get(key, key)} on {host}: {token:.0f} µs of httpd's CPU per handshake with the key "
                     f"in the token (runs {spread(data, host, key, 'token')}), {file_:.0f} µs with it in a file (runs "
                     f"{spread(data, host, key, 'file')}), {token - file_:+.0f} µs, so the token path makes "
                     f"{100 * file_ / token:.0f} % of the file path's rate; by library, " + ", ".join(top))
    return "; ".join(parts)


def merge(new: list[dict], path: Path = DATA) -> None:
    """Write new rows into path, keeping the rows of every host the new rows do not measure."""
    rate_rows.merge(path, COLUMNS, new, key=lambda r: (r["host"],),
                    order=lambda r: (r["host"], r["key"], r["key_in"], -int(r["samples"])))


def by_library(data: list[dict], least_us: float = 10.0) -> list[dict]:
    """The results page's table (facts-table :rows:): per library, the µs of httpd's CPU per handshake with the key
    in the token and in a file and the difference, per key type, for the libraries where any of them is at least
    least_us, then one row for all of httpd. One host's rows (the first in the file)."""
    host = data[0]["host"]
    keys = sorted({r["key"] for r in data if r["host"] == host}, key=lambda k: (k != "rsa2048", k))
    cols = {key: {place: per_library(data, host, key, place) for place in PLACES} for key in keys}
    libs = sorted({lib for key in keys for place in PLACES for lib in cols[key][place]},
                  key=lambda lib: -sum(cols[k]["token"].get(lib, 0.0) for k in keys))
    out = []
    for lib in [*libs, None]:
        row = {"library": "all of httpd" if lib is None else NAMES.get(lib, lib)}
        figures = []
        for key in keys:
            token = sum(cols[key]["token"].values()) if lib is None else cols[key]["token"].get(lib, 0.0)
            file_ = sum(cols[key]["file"].values()) if lib is None else cols[key]["file"].get(lib, 0.0)
            name = KEY_NAMES.get(key, key)
            row |= {f"{name}, token": f"{token:.0f}", f"{name}, file": f"{file_:.0f}",
                    f"{name}, difference": f"{token - file_:+.0f}"}
            figures += [token, file_, abs(token - file_)]
        if lib is None or max(figures) >= least_us:
            out.append(row)
    return out


PKCS11_LIBRARIES = ("pkcs11.so", "libopencryptoki.so.0.0.0", "libpkcs11_sw.so.0.0.0")


def pkcs11_sentence(path: Path = DATA) -> str:
    """Per key: the µs per handshake in the three PKCS #11 libraries' own code, and the share of the token path's
    extra CPU that is."""
    data = rows(path)
    parts = []
    for host, key in sorted({(r["host"], r["key"]) for r in data}, key=lambda hk: (hk[1] != "rsa2048", hk)):
        token = per_library(data, host, key, "token")
        own = sum(token.get(lib, 0.0) for lib in PKCS11_LIBRARIES)
        extra = sum(token.values()) - sum(per_library(data, host, key, "file").values())
        parts.append(f"{own:.0f} µs per handshake with the {KEY_NAMES.get(key, key)} key ({100 * own / extra:.0f} % "
                     f"of the {extra:.0f} µs the token path adds)")
    return " and ".join(parts)
