"""GSKit judges the names in the IHS and Db2 facts tables: every (protocol, cipher) they list, tried with real GSKit.

For each case a one-protocol, one-suite IHS fragment is mapped to GSKit attributes by gskit_server.py (the one
place the mapping lives) and served by gskserve; GSKit either refuses it at start (``gsk_attribute_set`` or
``gsk_environment_init`` returns an error: the verdict is that error, e.g. ``13 GSK_INVALID_PARAMETER``) or starts,
and then ``openssl s_client`` (OpenSSL 3.5 on the amd64 host) offers exactly that protocol and suite:

* ``negotiated``: the handshake completed with that protocol and suite;
* ``accepted, not negotiated``: GSKit started with it but the handshake failed (the verdict says why when it is
  known: OpenSSL 3.5 on Debian 13 has no SSL 3.0 or SSL 2.0 at all, so those cannot be tried from this client).

TLS 1.0 and 1.1 suites are offered with ``@SECLEVEL=0`` (OpenSSL 3.5 refuses TLS 1.0 and 1.1 at its default
level). ECDSA suites are served from a key database holding a P-256 key, the others from one holding an RSA
2048 key, both signed by the page's test CA. All cases run in one shell script in one container session: one
compile of gskserve, one short server start per case, each on a port of its own.

The recorded verdicts live in the facts tables (one source of truth for the lint and the page):

* facts/ihs/ihs-ciphers.csv ``gskit_8_0_60``: ``tls12 negotiated; tls11 13 GSK_INVALID_PARAMETER; ...``, one
  entry per protocol in ``protocols``;
* facts/ihs/ihs-protocols.csv ``gskit_8_0_60``: the protocol switched on alone with GSKit's own suites;
* facts/db2/clp-keywords.csv ``gskit_8_0_60`` on the SSL_CIPHERSPECS row (each suite on TLS 1.2, the protocol the
  current SSL_VERSIONS has with cipher lists) and the SSL_VERSIONS rows (each word's protocols alone).
"""

from __future__ import annotations

import base64
import shlex
from dataclasses import dataclass
from pathlib import Path

from checks.standins.ihs import gskit_server
from zrunbook import FACTS
from zrunbook import facts as facts_tables

COLUMN = "gskit_8_0_60"
IHS_CIPHERS = FACTS / "ihs" / "ihs-ciphers.csv"
IHS_PROTOCOLS = FACTS / "ihs" / "ihs-protocols.csv"
DB2_KEYWORDS = FACTS / "db2" / "clp-keywords.csv"
NEGOTIATED = "negotiated"
ACCEPTED = "accepted, not negotiated"
ALL_PROTOCOLS = ("SSLv2", "SSLv3", "TLSv10", "TLSv11", "TLSv12", "TLSv13")
KEY = {"tls10": "TLSv10", "tls11": "TLSv11", "tls12": "TLSv12", "tls13": "TLSv13"}
LOWER = {v: k for k, v in KEY.items()}
OPENSSL_FLAG = {"SSLv2": "-ssl2", "SSLv3": "-ssl3", "TLSv10": "-tls1", "TLSv1": "-tls1", "TLSv11": "-tls1_1",
                "TLSv12": "-tls1_2", "TLSv13": "-tls1_3"}
OPENSSL_VERSION = {"TLSv10": "TLSv1", "TLSv1": "TLSv1", "TLSv11": "TLSv1.1", "TLSv12": "TLSv1.2",
                   "TLSv13": "TLSv1.3"}
DB2_VERSIONS = {"TLSV1": ("TLSv10", "TLSv11"), "TLSV12": ("TLSv12",), "TLSV13": ("TLSv13",)}
WORK = "/root/zr-gskit-verdicts"
CA = "/root/zr-test-ca"  # the page's test CA (checks/hosts/apache.py)


@dataclass(frozen=True)
class Case:
    table: str  # "ihs-ciphers", "ihs-protocols", "db2-cipherspecs", "db2-versions"
    row: str  # the row's name (cipher long name, protocol name, Db2 word)
    protocol: str  # IHS protocol name served: TLSv12 ...
    cipher: str = ""  # GSKit's long name; "" for GSKit's own list

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.table, self.row, self.protocol)


# --- the tables' cases and recorded verdicts ----------------------------------------------------------------------


def _split(cell: str) -> dict[str, str]:
    """``tls12 negotiated; tls11 13 GSK_INVALID_PARAMETER`` -> {"tls12": "negotiated", ...}"""
    found = {}
    for part in cell.split(";"):
        part = part.strip()
        if part:
            head, _, rest = part.partition(" ")
            found[head] = rest.strip()
    return found


def cipher_verdicts(path: Path = IHS_CIPHERS) -> dict[str, dict[str, str]]:
    """Cipher long name -> {"tls12": verdict, ...} as the ciphers table records it."""
    return {r["long_name"]: _split(r[COLUMN]) for r in facts_tables.load(path, "ihs/ihs-ciphers")}


def refused(verdict: str) -> bool:
    """A verdict that is GSKit's error (it starts with GSKit's return code)."""
    return verdict[:1].isdigit()


def ihs_cases(ciphers: Path = IHS_CIPHERS, protocols: Path = IHS_PROTOCOLS) -> list[Case]:
    cases = [Case("ihs-ciphers", r["long_name"], KEY[p], r["long_name"])
             for r in facts_tables.load(ciphers, "ihs/ihs-ciphers") for p in r["protocols"].split()]
    cases += [Case("ihs-protocols", r["name"], r["name"]) for r in facts_tables.load(protocols, "ihs/ihs-protocols")]
    return cases


def _db2_rows(path: Path) -> list[dict[str, str]]:
    rows = facts_tables.load(path, "db2/clp-keywords")
    return [r for r in rows if r["keyword"] in ("SSL_CIPHERSPECS", "SSL_VERSIONS")]


def db2_cases(path: Path = DB2_KEYWORDS) -> list[Case]:
    cases = []
    for r in _db2_rows(path):
        if r["keyword"] == "SSL_CIPHERSPECS":
            cases += [Case("db2-cipherspecs", n, "TLSv12", n) for n in r["values"].split("|")]
        else:
            cases += [Case("db2-versions", f"{w}/{LOWER[p]}", p) for w in r["values"].split("|")
                      for p in DB2_VERSIONS[w]]
    return sorted(set(cases), key=lambda c: c.key)


def recorded(ciphers: Path = IHS_CIPHERS, protocols: Path = IHS_PROTOCOLS,
             db2: Path = DB2_KEYWORDS) -> dict[tuple[str, str, str], str]:
    """(table, row, protocol) -> the verdict the tables record."""
    found = {}
    for name, per in cipher_verdicts(ciphers).items():
        for k, v in per.items():
            found[("ihs-ciphers", name, KEY.get(k, k))] = v
    for r in facts_tables.load(protocols, "ihs/ihs-protocols"):
        found[("ihs-protocols", r["name"], r["name"])] = r[COLUMN]
    for r in _db2_rows(db2):
        table = "db2-cipherspecs" if r["keyword"] == "SSL_CIPHERSPECS" else "db2-versions"
        for name, v in _split(r[COLUMN]).items():
            found[(table, name, "TLSv12" if table == "db2-cipherspecs" else KEY[name.split("/")[-1]])] = v
    return found


def mismatches(found: dict[tuple[str, str, str], str], table: dict[tuple[str, str, str], str]) -> list[str]:
    """One sentence per case where GSKit's verdict today is not the one the table records (or either is missing)."""
    said = []
    for key in sorted(set(found) | set(table)):
        if found.get(key) != table.get(key):
            said.append(f"{key[0]} {key[1]} on {key[2]}: the table records {table.get(key, 'nothing')!r}, "
                        f"GSKit says {found.get(key, 'nothing (not tried)')!r}")
    return said


# --- running them -------------------------------------------------------------------------------------------------


def fragment(case: Case, port: int) -> str:
    """The IHS fragment for one case: only case.protocol on, and its list holding case.cipher alone."""
    kdb = f"{WORK}/ec.kdb" if "ECDSA" in case.cipher else f"{WORK}/rsa.kdb"
    proto = {"TLSv1": "TLSv10"}.get(case.protocol, case.protocol)
    off = [p for p in ALL_PROTOCOLS if p != proto]
    lines = [f"Listen 127.0.0.1:{port}", f"KeyFile {kdb}", "SSLServerCert ihscert",
             f"SSLProtocolDisable {' '.join(off)}", f"SSLProtocolEnable {proto}"]
    if case.cipher:
        lines += ["SSLCipherSpec ALL NONE", f"SSLCipherSpec {proto} +{case.cipher}"]
    return "\n".join(lines) + "\n"


def client(case: Case, port: int) -> str:
    """The openssl s_client command offering exactly case's protocol (and suite)."""
    args = [OPENSSL_FLAG[case.protocol]]
    if case.protocol == "TLSv13":
        if case.cipher:
            args += ["-ciphersuites", case.cipher]
    else:
        name = f"$(openssl ciphers -convert {case.cipher} | sed 's/^OpenSSL cipher name: //')" if case.cipher \
            else "ALL"
        args += ["-cipher", f'"{name}:@SECLEVEL=0"']
    return (f"timeout 20 openssl s_client -connect 127.0.0.1:{port} -servername www.example.com "
            f"-CAfile {CA}/ca.crt -verify_return_error -brief {' '.join(args)} < /dev/null 2>&1")


KEYS = f"""\
set -u
mkdir -p {WORK} && cd {WORK}
openssl req -new -newkey rsa:2048 -nodes -subj /CN=www.example.com -keyout rsa.key -out rsa.csr 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=www.example.com -keyout ec.key \
    -out ec.csr 2>/dev/null
for k in rsa ec; do
    CA_DIR={CA} bash "$TEST_CA" sign $k.csr $k.crt >/dev/null || exit 3
    KDB_PW="$GSKSERVE_KEYDB_PW" openssl pkcs12 -export -in $k.crt -inkey $k.key -certfile {CA}/ca.crt \
        -name ihscert -passout env:KDB_PW -out $k.kdb || exit 3
    {gskit_server.ENV} "$GSKSERVE" --stash {WORK}/$k.kdb >/dev/null || exit 3
done
"""

ONE = """\
echo "=== {n}"
{command} > out.{n} 2> err.{n} < /dev/null &
pid=$!
for i in $(seq 200); do
    grep -q ready out.{n} && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
if grep -q ready out.{n}; then
    echo "started"
    {client}
    kill $pid
elif kill -0 $pid 2>/dev/null; then
    kill $pid; echo "refused"; echo "did not listen in 10 s"
else
    wait $pid; echo "refused"; cat out.{n} err.{n}
fi
"""


def script(cases: list[Case], binary: str, test_ca: str, base_port: int = 4400) -> str:
    """One shell script that judges every case (keys first), printing ``=== N`` and what happened for each."""
    parts = [f"export GSKSERVE={shlex.quote(binary)} TEST_CA={shlex.quote(test_ca)}", KEYS]
    for n, case in enumerate(cases):
        port = base_port + n
        parts.append(ONE.format(n=n, command=gskit_server.command(fragment(case, port), binary),
                                client=client(case, port)))
    return "\n".join(parts)


def _field(text: str, name: str) -> str:
    for line in text.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def verdict(case: Case, said: str) -> str:
    """The verdict for one case from what the script printed for it."""
    lines = said.splitlines()
    if lines and lines[0] == "refused":
        for line in lines[1:]:
            if line.startswith(("gsk_attribute_set", "gsk_environment_init")):
                return line.split(": ", 1)[1].strip()
        return "did not start: " + " ".join(lines[1:])[:120]
    version, suite = _field(said, "Protocol version"), _field(said, "Ciphersuite")
    if version == OPENSSL_VERSION.get(case.protocol) and (not case.cipher or suite_matches(case.cipher, suite)):
        return NEGOTIATED
    if case.protocol in ("SSLv2", "SSLv3"):
        return f"{ACCEPTED} (OpenSSL 3.5 here has no {case.protocol})"
    return ACCEPTED


def suite_matches(iana: str, openssl_name: str) -> bool:
    return openssl_name == iana or OPENSSL_NAMES.get(openssl_name) == iana


OPENSSL_NAMES: dict[str, str] = {}  # filled by judge() from the host's ``openssl ciphers -stdname``


def judge(host, binary: str, test_ca: str, cases: list[Case], password: str) -> dict[tuple[str, str, str], str]:
    """Run every case on the host; (table, row, protocol) -> verdict."""
    names = host.run("openssl ciphers -stdname 'ALL:@SECLEVEL=0'").stdout
    for line in names.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "-":
            OPENSSL_NAMES[parts[2]] = parts[0]
    text = script(cases, binary, test_ca)
    host.run(f"echo {base64.b64encode(text.encode()).decode()} | base64 -d > /root/zr-gskit-verdicts.sh")
    res = host.run(f"GSKSERVE_KEYDB_PW={shlex.quote(password)} bash /root/zr-gskit-verdicts.sh")
    assert "=== 0" in res.stdout, f"the verdict script failed before the first case:\n{res.stdout}\n{res.stderr}"
    blocks = res.stdout.split("=== ")[1:]
    found = {}
    for block in blocks:
        n, _, said = block.partition("\n")
        case = cases[int(n)]
        found[case.key] = verdict(case, said)
    assert len(found) == len(cases), f"{len(found)} of {len(cases)} cases ran:\n{res.stdout[-3000:]}"
    return found
