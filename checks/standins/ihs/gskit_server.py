"""IBM's GSKit serving TLS from the IHS chapter's mod_ibm_ssl directives: the one place where they become GSKit
attributes.

IBM HTTP Server cannot be installed here, but the TLS library under its mod_ibm_ssl can: the Db2 CLI driver in
PyPI's ibm_db wheel (zrunbook/clidriver.py, GSKit 8.0.60.5) carries libgsk8ssl_64, libgsk8km_64 and
libgsk8p11_64. ``gskserve`` (checks/standins/ihs/gskit_server/gskserve.c) is a small TLS server on GSKit's SSL API that
knows no directive; ``attributes(conf)`` maps the directives to what it sets, as mod_ibm_ssl would:

=====================================  =================================================================
directive                              GSKit attribute (facts/ihs/gskit-attributes.csv: numbers, sources)
=====================================  =================================================================
``KeyFile PATH``                       GSK_KEYRING_FILE PATH; GSK_KEYRING_STASH_FILE PATH with ``.sth``
``SSLServerCert LABEL``                GSK_KEYRING_LABEL LABEL
``SSLServerCert TOKEN:LABEL``          GSK_KEYRING_LABEL TOKEN:LABEL; GSK_PKCS11_TOKEN_LABEL TOKEN; and
                                       GSK_PKCS11_TOKEN_PWD from the SSLStashfile
``SSLPKCSDriver PATH``                 GSK_PKCS11_DRIVER_PATH PATH
``SSLProtocolDisable/Enable P...``     GSK_PROTOCOL_* off/on for each protocol named
``SSLCipherSpec P [+|-]NAME...``       GSK_TLSV1x_CIPHER_SPECS_EX: P's list, long names, comma-separated
``SSLCipherSpec ALL NONE``             every protocol's list emptied first
=====================================  =================================================================

A protocol no directive names is switched on (TLS 1.0 to 1.3) or off (SSL 2 and 3), and a protocol whose cipher
list is empty keeps GSKit's own: that is this mapping's choice, not IHS's defaults, which IBM documents per fix
pack. Short cipher names (``C02F``) become long ones through facts/ihs/ihs-ciphers.csv. The directives' arguments
are checked before this by the chapter's ``httpd -t`` lint (checks/standins/ihs/ihs_lint.py); this module trusts them.

``names_in_library(path)`` reads GSKit's own table of attribute names out of libgsk8ssl_64.so (a static
initialiser stores each name with its number), so a check can prove the CSV's numbers are the library's.
``build(host)`` compiles gskserve on a container host where the wheel's folder is mounted at
clidriver.IN_CONTAINER and ``command(conf, binary)`` is the shell command that serves conf there; gskserve's
``--create-kdb`` and ``--stash`` modes make a CMS key database and its stash with GSKit's key management library.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from zrunbook import FACTS, clidriver
from zrunbook import facts as facts_tables

SOURCE = Path(__file__).resolve().parent / "gskit_server" / "gskserve.c"
TABLE = FACTS / "ihs" / "gskit-attributes.csv"
ICC = f"{clidriver.IN_CONTAINER}/clidriver/lib/icc"
ENV = f"LD_LIBRARY_PATH={ICC}:{clidriver.IN_CONTAINER}/clidriver/lib"
KIND = {"buffer": "b", "enum": "e", "numeric": "n"}
# SSLv2, SSLv3 and TLS 1.0 take their own ON/OFF values; TLS 1.1 and later GSK_TRUE (1) / GSK_FALSE (0)
PROTOCOLS = {
    "SSLv2": ("GSK_PROTOCOL_SSLV2", 510, 511),
    "SSLv3": ("GSK_PROTOCOL_SSLV3", 512, 513),
    "TLSv10": ("GSK_PROTOCOL_TLSV1", 518, 519),
    "TLSv1": ("GSK_PROTOCOL_TLSV1", 518, 519),
    "TLSv11": ("GSK_PROTOCOL_TLSV11", 1, 0),
    "TLSv12": ("GSK_PROTOCOL_TLSV12", 1, 0),
    "TLSv13": ("GSK_PROTOCOL_TLSV13", 1, 0),
}
ON_UNLESS_DISABLED = ("TLSv10", "TLSv11", "TLSv12", "TLSv13")
CIPHER_LISTS = {"TLSv10": "GSK_TLSV10_CIPHER_SPECS_EX", "TLSv1": "GSK_TLSV10_CIPHER_SPECS_EX",
                "TLSv11": "GSK_TLSV11_CIPHER_SPECS_EX", "TLSv12": "GSK_TLSV12_CIPHER_SPECS_EX",
                "TLSv13": "GSK_TLSV13_CIPHER_SPECS_EX"}
CSV_PROTOCOL = {"tls10": "TLSv10", "tls11": "TLSv11", "tls12": "TLSv12", "tls13": "TLSv13"}
PROTOCOL_USED = {596: "TLSv1.2", 5000: "TLSv1.3", 595: "TLSv1.1", 520: "TLSv1"}  # GSK_PROTOCOL_USED's answers


def ids() -> dict[str, tuple[str, int]]:
    """GSKit attribute name -> (call kind, number), from facts/ihs/gskit-attributes.csv."""
    return {r["attribute"]: (r["call"], int(r["id"])) for r in facts_tables.load(TABLE)}


@dataclass(frozen=True)
class Setting:
    attribute: str
    value: str  # as gskserve takes it: text, @ENVNAME, %STASHFILE or a number
    directive: str  # where it came from

    def arg(self, table: dict[str, tuple[str, int]]) -> str:
        kind, number = table[self.attribute]
        return f"{KIND[kind]}:{number}={self.value}"


def directives(conf: str) -> list[tuple[str, list[str]]]:
    """(name, arguments) of each directive, in order (comments and section lines left out)."""
    found = []
    for line in conf.splitlines():
        words = line.split("#", 1)[0].split()
        if words and not words[0].startswith("<"):
            found.append((words[0], words[1:]))
    return found


def _cipher_names() -> tuple[dict[str, str], dict[str, set[str]]]:
    rows = facts_tables.load(FACTS / "ihs" / "ihs-ciphers.csv")
    long = {r["short_name"]: r["long_name"] for r in rows} | {r["long_name"]: r["long_name"] for r in rows}
    where = {r["long_name"]: {CSV_PROTOCOL[p] for p in r["protocols"].split()} for r in rows}
    return long, where


def attributes(conf: str) -> list[Setting]:
    """The GSKit attributes for conf (the text of httpd.conf with its Include files inlined), in the order set."""
    long, where = _cipher_names()
    settings: list[Setting] = []
    protocols = {p: p in ON_UNLESS_DISABLED for p in ("SSLv2", "SSLv3", "TLSv10", "TLSv11", "TLSv12", "TLSv13")}
    named: set[str] = set()
    ciphers: dict[str, list[str]] = {}
    token_stash = None
    token = None
    for name, args in directives(conf):
        if name == "KeyFile":
            path = args[-1]  # "KeyFile /prompt PATH" asks at start: this server does not prompt
            settings += [Setting("GSK_KEYRING_FILE", path, "KeyFile"),
                         Setting("GSK_KEYRING_STASH_FILE", str(Path(path).with_suffix(".sth")), "KeyFile")]
        elif name == "SSLServerCert":
            label = args[0]
            settings.append(Setting("GSK_KEYRING_LABEL", label, "SSLServerCert"))
            if ":" in label:
                token = label.split(":", 1)[0]
                settings.append(Setting("GSK_PKCS11_TOKEN_LABEL", token, "SSLServerCert"))
        elif name == "SSLPKCSDriver":
            settings.append(Setting("GSK_PKCS11_DRIVER_PATH", args[0], "SSLPKCSDriver"))
        elif name == "SSLStashfile":
            token_stash = args[0]
        elif name in ("SSLProtocolDisable", "SSLProtocolEnable"):
            for p in args:
                p = {"TLSv1": "TLSv10"}.get(p, p)
                protocols[p] = name == "SSLProtocolEnable"
                named.add(p)
        elif name == "SSLCipherSpec":
            if args and (args[0] in CIPHER_LISTS or args[0] == "ALL"):
                scope, names = args[0], args[1:]
            else:
                scope, names = "ALL", args
            targets = ["TLSv10", "TLSv11", "TLSv12", "TLSv13"] if scope == "ALL" else \
                [{"TLSv1": "TLSv10"}.get(scope, scope)]
            for n in names:
                if n == "NONE":
                    for p in targets:
                        ciphers[p] = []
                    continue
                sign, bare = (n[0], n[1:]) if n[0] in "+-" else ("+", n)
                full = long.get(bare, bare)  # a name the table lacks goes to GSKit as written: GSKit decides
                for p in targets:
                    if scope == "ALL" and full in where and p not in where[full]:
                        continue
                    lst = ciphers.setdefault(p, [])
                    if sign == "+" and full not in lst:
                        lst.append(full)
                    elif sign == "-" and full in lst:
                        lst.remove(full)
    if token is not None and token_stash is not None:
        settings.append(Setting("GSK_PKCS11_TOKEN_PWD", f"%{token_stash}", "SSLStashfile"))
    for p, on in protocols.items():
        attr, yes, no = PROTOCOLS[p]
        state = "Enable" if on else "Disable"
        said = f"SSLProtocol{state} {p}" if p in named else f"{p} not named: {state.lower()}d"
        settings.append(Setting(attr, str(yes if on else no), said))
    for p in ("TLSv10", "TLSv11", "TLSv12", "TLSv13"):
        if ciphers.get(p):
            settings.append(Setting(CIPHER_LISTS[p], ",".join(ciphers[p]), f"SSLCipherSpec {p}"))
    return settings


def listen_port(conf: str) -> int:
    ports = [a[-1].rsplit(":", 1)[-1] for n, a in directives(conf) if n == "Listen"]
    assert len(ports) == 1, f"expected one Listen directive, found {ports}"
    return int(ports[0])


def command(conf: str, binary: str) -> str:
    """The shell command that serves conf with gskserve (binary: its path on the host)."""
    table = ids()
    args = " ".join(shlex.quote(s.arg(table)) for s in attributes(conf))
    return f"{ENV} {binary} {listen_port(conf)} {args}"


def build(host) -> str:
    """gskserve compiled on the host against the mounted wheel's GSKit, once per source version; its path."""
    source = SOURCE.read_bytes()
    folder = f"/var/tmp/zr-gskserve-{hashlib.sha256(source).hexdigest()[:12]}"
    binary = f"{folder}/gskserve"
    if host.run(f"test -x {binary}").rc == 0:
        return binary
    host.run_expect([0], f"mkdir -p {folder} && echo {base64.b64encode(source).decode()} | base64 -d > "
                         f"{folder}/gskserve.c")
    res = host.run(f"gcc -O2 -Wall -pthread -o {binary} {folder}/gskserve.c -L{ICC} "
                   "-l:libgsk8ssl_64.so -l:libgsk8km_64.so")
    assert res.rc == 0, f"gcc could not build gskserve against {ICC}:\n{res.stdout}\n{res.stderr}"
    return binary


NAME_ENTRY = re.compile(r"lea\s+\S+\(%rip\),%rsi\s+# ([0-9a-f]+)")
NUMBER = re.compile(r"movl\s+\$0x([0-9a-f]+),")


def names_in_library(library: Path) -> dict[str, int]:
    """GSK_* name -> number as libgsk8ssl_64.so's own name table holds them (x86-64 build).

    The library builds its table in a static initialiser: for each entry it loads the address of the name
    (``lea NAME(%rip),%rsi``), stores the number (``movl $N, entry``) and calls GSKString's constructor. This
    reads those triples from ``objdump -d``; a name that appears with two numbers is left out.
    """
    blob = library.read_bytes()
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    found: dict[str, set[int]] = {}
    for i, line in enumerate(dis):
        m = NAME_ENTRY.search(line)
        if not m:
            continue
        at = int(m.group(1), 16)
        if at >= len(blob):
            continue
        name = blob[at:blob.find(b"\0", at)].decode("latin-1")
        if not re.fullmatch(r"GSK_[A-Z0-9_]+", name):
            continue
        for later in dis[i + 1:i + 6]:
            if "call" in later:
                break
            n = NUMBER.search(later)
            if n:
                found.setdefault(name, set()).add(int(n.group(1), 16))
                break
    return {k: next(iter(v)) for k, v in found.items() if len(v) == 1}


def sslstash_form(secret: str, size: int = 1024) -> bytes:
    """A stash file in the form gskserve reads for SSLStashfile (each byte XOR 0xF5, padded with bytes that give 0,
    the simple form of older GSKit stash files): the stand-in for IHS's sslstash, which is not available here. That
    IHS 9.0.5's sslstash writes this form has not been confirmed; the key database stash GSKit 8.0.60.5 writes
    (libgsk8km_64, 193 bytes here) is a different, newer form."""
    data = bytes(b ^ 0xF5 for b in secret.encode())
    return data + bytes([0xF5]) * (size - len(data))
