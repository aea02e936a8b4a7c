"""TLS as written: a server configuration's protocol and cipher suite lists, read from the file, against the policy.

A handshake with this build's OpenSSL or JDK proves only what that build still offers: its defaults may hide a
protocol or a suite the reader's build honours. This checker reads the lists as they are written and judges each
entry against facts/crypto/tls-policy.csv (TLS 1.2 and 1.3; forward-secret key exchange; AEAD ciphers):

* every protocol switched on, and every suite named, outside the policy is a problem that says why;
* a suite list that is not a list (an OpenSSL keyword such as ``HIGH`` or ``DEFAULT``, WebSphere's
  ``securityLevel HIGH``, WebSEAL's ``ALL``) is a problem: its expansion depends on the build;
* a list that is not written at all is a problem where the product's default lets in what the policy refuses
  (the table's ``default`` rows say what the default is, with their sources). One exception, also in the table:
  a suite list of AEAD suites alone keeps TLS 1.0 and 1.1 out, since those suites do not exist before TLS 1.2,
  so CTG (whose SSL handler has no protocol parameter) needs no protocol list.

Suites are judged by their IANA (or IBM ``SSL_``) name, parsed into key exchange and cipher; OpenSSL names
(``ECDHE-RSA-AES256-GCM-SHA384``), GSKit short names (``C02F``, facts/ihs/ihs-ciphers.csv) and WebSEAL cipher
levels (``AES-128``, facts/webseal/qop-ciphers.csv) are mapped first. The formats are read with the project's
parsers where one exists: WebSEAL's stanza reader, CTG's ini reader, the Db2 CLP reader and wsadmin's argument
parser; server.xml with xml.etree; the wsadmin script's modifySSLConfig argument is evaluated from the script's
own constants with ast (nothing runs).

``file_problems(path)`` picks the reader from the file's form and returns one sentence per problem.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from zrunbook import FACTS
from zrunbook import facts as facts_tables
from zrunbook.ctg import ctg_ini
from zrunbook.formats import clp
from zrunbook.was.wsadmin_args import WsadminError, parse_task_args
from zrunbook.webseal import stanza

POLICY = FACTS / "crypto" / "tls-policy.csv"
ALL_TLS = ("TLS 1.0", "TLS 1.1", "TLS 1.2", "TLS 1.3")


@functools.cache
def policy() -> dict[tuple[str, str], dict[str, str]]:
    return {(r["kind"], r["name"]): r for r in facts_tables.load(POLICY)}


def _row(kind: str, name: str) -> dict[str, str] | None:
    return policy().get((kind, name))


def _default(name: str) -> str:
    row = policy()[("default", name)]
    return f"{row['why']} ({row['source']})"


# --- names -------------------------------------------------------------------------------------------------

PROTOCOL_NAMES = {  # every product's spelling, lower case -> the table's name
    "sslv2": "SSL 2.0", "sslv3": "SSL 3.0",
    "tlsv1": "TLS 1.0", "tlsv10": "TLS 1.0", "tlsv1.0": "TLS 1.0",
    "tlsv11": "TLS 1.1", "tlsv1.1": "TLS 1.1",
    "tlsv12": "TLS 1.2", "tlsv1.2": "TLS 1.2",
    "tlsv13": "TLS 1.3", "tlsv1.3": "TLS 1.3",
}
MACS = ("SHA", "SHA256", "SHA384", "MD5")


# IBMJSSE2's protocol families (WebSphere's sslProtocol, Liberty's): what each enables, from the IBM SDK's table,
# https://www.ibm.com/support/knowledgecenter/en/SSYKE2_8.0.0/com.ibm.java.security.component.80.doc/security-component/jsse2Docs/protocols.html
JSSE_FAMILIES = {"SSL_TLS": {"TLS 1.0"}, "SSL_TLSv2": {"TLS 1.0", "TLS 1.1", "TLS 1.2"},
                 "SSL": {"TLS 1.0", "TLS 1.1", "TLS 1.2"}, "TLS": set(ALL_TLS)}


def protocol(word: str) -> str | None:
    return PROTOCOL_NAMES.get(word.lower())


def jsse_protocols(value: str) -> set[str]:
    """A comma-separated JSSE protocol value as the protocols it enables (unknown words kept as written)."""
    out: set[str] = set()
    for word in (w.strip() for w in value.split(",") if w.strip()):
        out |= JSSE_FAMILIES.get(word) or {protocol(word) or word}
    return out


def iana(name: str) -> str | None:
    """The IANA-style name of one concrete suite written as IANA, IBM (SSL_...) or OpenSSL names; None for a word
    that names no single suite (a keyword, an alias, an operator)."""
    if re.fullmatch(r"(TLS|SSL)_[A-Z0-9_]+", name):
        return "TLS_" + name[4:]
    if not re.fullmatch(r"[A-Z0-9]+(-[A-Z0-9]+)+", name):
        return None
    parts = name.split("-")
    if not (parts[-1] in MACS or parts[-1] in ("POLY1305", "CCM", "CCM8")):
        return None  # e.g. ECDHE-ECDSA: no cipher and MAC, so not one suite
    kx = "RSA"
    for prefix, kx_name in (("ECDHE-RSA-", "ECDHE_RSA"), ("ECDHE-ECDSA-", "ECDHE_ECDSA"), ("DHE-RSA-", "DHE_RSA"),
                            ("EDH-RSA-", "DHE_RSA"), ("DHE-DSS-", "DHE_DSS"), ("ECDH-RSA-", "ECDH_RSA"),
                            ("ECDH-ECDSA-", "ECDH_ECDSA"), ("DH-RSA-", "DH_RSA")):
        if name.startswith(prefix):
            kx, name = kx_name, name[len(prefix):]
            break
    rest = name.replace("CHACHA20-POLY1305", "CHACHA20_POLY1305").replace("DES-CBC3", "3DES_EDE_CBC")
    rest = re.sub(r"^AES(128|256)-(GCM|CCM8|CCM)", lambda m: f"AES_{m[1]}_{m[2].replace('CCM8', 'CCM_8')}", rest)
    rest = re.sub(r"^AES(128|256)-", r"AES_\1_CBC-", rest)
    return f"TLS_{kx}_WITH_{rest.replace('-', '_')}"


def parts(suite: str) -> tuple[str, str]:
    """(key exchange, cipher) of an IANA-style name, as the policy table names them ("?" where unknown)."""
    if "_WITH_" not in suite:  # TLS 1.3: TLS_AES_128_GCM_SHA256
        kx, cipher = "TLS 1.3", suite[4:]
    else:
        head, cipher = suite[4:].split("_WITH_", 1)
        kx = head.split("_")[0]
        kx = {"EDH": "DHE"}.get(kx, kx)
    if "CHACHA20_POLY1305" in cipher:
        kind = "CHACHA20-POLY1305"
    elif "CCM_8" in cipher:
        kind = "AES-CCM-8"
    elif "AES" in cipher and "GCM" in cipher:
        kind = "AES-GCM"
    elif "AES" in cipher and "CCM" in cipher:
        kind = "AES-CCM"
    elif "3DES" in cipher:
        kind = "3DES"
    elif "RC4" in cipher:
        kind = "RC4"
    elif cipher.startswith("NULL"):
        kind = "NULL"
    elif "CBC" in cipher:
        kind = "CBC"
    else:
        kind = "?"
    return kx, kind


def suite_problem(written: str, suite: str) -> str | None:
    """Why ``suite`` (IANA-style; ``written`` as the file has it) is outside the policy; None when it is inside."""
    kx, cipher = parts(suite)
    reasons = []
    for kind, value in (("key exchange", kx), ("cipher", cipher)):
        row = _row(kind, value)
        if row is None:
            reasons.append(f"{kind} {value} is not in the policy table")
        elif row["verdict"] != "allowed":
            reasons.append(f"{kind} {value}: {row['why']}")
    if not reasons:
        return None
    shown = written if written == suite else f"{written} ({suite})"
    return f"suite {shown} is outside the policy: {'; '.join(reasons)}"


def aead(suite: str) -> bool:
    return parts(suite)[1] in ("AES-GCM", "AES-CCM", "AES-CCM-8", "CHACHA20-POLY1305")


# --- one endpoint's lists -------------------------------------------------------------------------------------

@dataclass
class Endpoint:
    """What one server (or proxy) side of a file writes. protocols None: not written (then protocol_default
    names the table's default row, or "" where the product has no protocol list); suites None: not written."""

    what: str
    protocols: set[str] | None = None
    protocol_line: int = 0
    protocol_default: str = ""
    suites: list[tuple[int, str]] | None = None  # (line, name as written)
    suite_default: str = ""
    problems: list[str] = field(default_factory=list)

    def add_suites(self, line: int, names: list[str]) -> None:
        self.suites = (self.suites or []) + [(line, n) for n in names if n]


def _at(line: int) -> str:
    return f"line {line}: " if line else ""  # xml.etree gives no line numbers


def judge(ep: Endpoint) -> list[str]:
    out = list(ep.problems)
    judged: list[str] = []
    for line, name in ep.suites or []:
        suite = iana(name)
        if suite is None:
            out.append(f"{_at(line)}{ep.what}: {name!r} is not a cipher suite but a keyword or alias whose "
                       "expansion depends on the build: write the suites one by one")
            continue
        judged.append(suite)
        if why := suite_problem(name, suite):
            out.append(f"{_at(line)}{ep.what}: {why}")
    if ep.protocols is None:
        floor = _row("suite floor", "AEAD")  # only TLS 1.2 and 1.3 can carry AEAD suites
        if floor and ep.suites and judged and all(aead(s) for s in judged):
            pass
        elif ep.protocol_default:
            out.append(f"{ep.what}: no protocol list is written: {_default(ep.protocol_default)}"
                       + ("; a suite list of AEAD suites alone would keep them out" if floor else ""))
        enabled: set[str] = set(ALL_TLS)
    else:
        enabled = ep.protocols
        for name in sorted(enabled):
            row = _row("protocol", name)
            if row is None or row["verdict"] != "allowed":
                out.append(f"{_at(ep.protocol_line)}{ep.what}: {name} is switched on: "
                           f"{row['why'] if row else 'not in the policy table'}")
    if ep.suites is None and enabled - {"TLS 1.3"} and ep.suite_default:
        out.append(f"{ep.what}: no suite list is written: {_default(ep.suite_default)}")
    return out


# --- readers, one per form ------------------------------------------------------------------------------------

def _directives(text: str):
    for no, raw in enumerate(text.splitlines(), 1):
        words = raw.split()
        if words and not words[0].startswith(("#", "<")):
            yield no, words[0].lower(), [w.strip('"') for w in words[1:]]


def _apache_protocols(args: list[str]) -> set[str]:
    enabled: set[str] = set()
    for word in args:
        sign, name = (word[0], word[1:]) if word[:1] in "+-" else ("", word)
        named = set(ALL_TLS) if name.lower() == "all" else {protocol(name) or name}
        if sign == "-":
            enabled -= named
        else:
            enabled |= named
    return enabled


def apache(text: str) -> list[Endpoint]:
    """mod_ssl: SSLProtocol / SSLCipherSuite [TLSv1.3] / SSLOpenSSLConfCmd Ciphersuites, and the SSLProxy* side
    where SSLProxyEngine is on."""
    server = Endpoint("SSLProtocol/SSLCipherSuite", protocol_default="Apache SSLProtocol",
                      suite_default="Apache SSLCipherSuite")
    proxy = Endpoint("SSLProxyProtocol/SSLProxyCipherSuite", protocol_default="Apache SSLProxyProtocol",
                     suite_default="Apache SSLProxyCipherSuite")
    proxied = False
    for no, name, args in _directives(text):
        side = proxy if name.startswith("sslproxy") else server
        if name in ("sslprotocol", "sslproxyprotocol"):
            side.protocols, side.protocol_line = _apache_protocols(args), no
        elif name in ("sslciphersuite", "sslproxyciphersuite") and args:
            side.add_suites(no, args[-1].split(":"))
        elif name == "sslopensslconfcmd" and len(args) == 2 and args[0].lower() == "ciphersuites":
            server.add_suites(no, args[1].split(":"))
        elif name == "sslproxyengine" and args and args[0].lower() == "on":
            proxied = True
    return [server, proxy] if proxied else [server]


def ihs(text: str) -> list[Endpoint]:
    """mod_ibm_ssl: SSLProtocolDisable / SSLProtocolEnable and SSLCipherSpec [protocol] [+|-]name (long or short
    names, facts/ihs/ihs-ciphers.csv)."""
    short = {r["short_name"].lower(): r["long_name"] for r in facts_tables.load(FACTS / "ihs" / "ihs-ciphers.csv")}
    ep = Endpoint("SSLProtocolDisable/SSLCipherSpec", suite_default="IHS SSLCipherSpec")
    enabled, line, cleared = set(ALL_TLS), 0, False
    for no, name, args in _directives(text):
        if name in ("sslprotocoldisable", "sslprotocolenable"):
            named = {protocol(a) or a for a in args}
            enabled = enabled - named if name == "sslprotocoldisable" else enabled | named
            line = no
        elif name == "sslcipherspec" and args:
            if args[0].upper() == "ALL" and len(args) > 1 and args[1].upper() == "NONE":
                cleared = True
                continue
            names = args[1:] if args[0].upper() == "ALL" or protocol(args[0]) else args
            if not cleared:
                ep.problems.append(f"line {no}: SSLCipherSpec adds to a list it did not clear: "
                                   f"{_default('IHS SSLCipherSpec')}")
                cleared = True
            ep.add_suites(no, [short.get(n.lstrip("+").lower(), n.lstrip("+")) for n in names
                               if not n.startswith("-")])
    if line == 0:
        ep.problems.append(f"no SSLProtocolDisable: {_default('IHS SSLProtocolDisable')}")
    ep.protocols, ep.protocol_line = enabled, line
    return [ep]


def liberty(text: str) -> list[Endpoint]:
    """server.xml: every <ssl> element's sslProtocol (comma list) and enabledCiphers (blank-separated)."""
    found = []
    for element in ET.fromstring(text).iter("ssl"):
        ep = Endpoint(f"<ssl id={element.get('id')!r}>", protocol_default="Liberty sslProtocol",
                      suite_default="Liberty enabledCiphers")
        if (value := element.get("sslProtocol")) is not None:
            ep.protocols = jsse_protocols(value)
        if (value := element.get("enabledCiphers")) is not None:
            ep.add_suites(0, value.split())
        found.append(ep)
    return found


class _Values:
    """The module-level constants of a wsadmin script (names bound once to a literal)."""

    def __init__(self, tree: ast.Module):
        self.names: dict[str, object] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                with contextlib.suppress(ValueError):
                    self.names[node.targets[0].id] = ast.literal_eval(node.value)

    def value(self, node: ast.AST) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id, "X")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            right = self.value(node.right) if not isinstance(node.right, ast.Tuple) else tuple(
                self.value(e) for e in node.right.elts)
            return str(self.value(node.left)) % right
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return str(self.value(node.left)) + str(self.value(node.right))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
                and len(node.args) == 1):
            return str(self.value(node.func.value)).join(str(v) for v in self.value(node.args[0]))
        return "X"


def wsadmin(text: str) -> list[Endpoint]:
    """AdminTask.createSSLConfig / modifySSLConfig: -sslProtocol, -securityLevel and -enabledCiphers."""
    tree = ast.parse(text)
    values = _Values(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("createSSLConfig", "modifySSLConfig") and node.args):
            continue
        ep = Endpoint(f"AdminTask.{node.func.attr}", protocol_default="WAS -sslProtocol",
                      suite_default="WAS -enabledCiphers")
        try:
            params = dict(parse_task_args(str(values.value(node.args[0]))))
        except (WsadminError, ValueError) as exc:
            ep.problems.append(f"line {node.lineno}: {ep.what}: the arguments cannot be read: {exc}")
            found.append(ep)
            continue
        if "sslProtocol" in params:
            ep.protocols = jsse_protocols(params["sslProtocol"])
            ep.protocol_line = node.lineno
        if "enabledCiphers" in params:
            ep.add_suites(node.lineno, params["enabledCiphers"].split())
        elif "securityLevel" in params:
            ep.add_suites(node.lineno, [params["securityLevel"]])
        found.append(ep)
    return found


def db2(text: str) -> list[Endpoint]:
    """db2 UPDATE DBM CFG USING SSL_VERSIONS ... SSL_CIPHERSPECS ... (read by the project's CLP parser); only a
    script that sets up the TLS listener (SSL_SVCENAME) or names either list is judged."""
    dbm: dict[str, tuple[int, str]] = {}
    for cmd in clp.commands(text)[0]:
        if cmd.name == "dbm-cfg":
            dbm.update({k: (cmd.line, v) for k, v in cmd.params.items()})
    if not {"SSL_SVCENAME", "SSL_VERSIONS", "SSL_CIPHERSPECS"} & set(dbm):
        return []
    ep = Endpoint("SSL_VERSIONS/SSL_CIPHERSPECS", protocol_default="Db2 SSL_VERSIONS",
                  suite_default="Db2 SSL_CIPHERSPECS")
    if "SSL_VERSIONS" in dbm:
        line, value = dbm["SSL_VERSIONS"]
        named: set[str] = set()
        for word in value.split(","):  # Db2's TLSV1 means TLS 1.0 and 1.1 (facts/db2/clp-keywords.csv)
            named |= {"TLS 1.0", "TLS 1.1"} if word.upper() == "TLSV1" else {protocol(word) or word}
        ep.protocols, ep.protocol_line = named, line
    if "SSL_CIPHERSPECS" in dbm:
        line, value = dbm["SSL_CIPHERSPECS"]
        ep.add_suites(line, value.split(","))
    return [ep]


def jdbc(text: str) -> list[Endpoint]:
    """IBM's JDBC driver properties: sslVersion (TLSv1.3 still offers 1.2, facts/db2/jcc-properties.csv) and
    sslCipherSuites (comma-separated)."""
    props = {}
    for no, raw in enumerate(text.splitlines(), 1):
        if "=" in raw and not raw.lstrip().startswith("#"):
            key, value = raw.split("=", 1)
            props[key.strip()] = (no, value.strip())
    if "sslConnection" not in props:
        return []
    ep = Endpoint("sslVersion/sslCipherSuites", suite_default="JDBC sslCipherSuites")
    if "sslVersion" in props:
        line, value = props["sslVersion"]
        ep.protocols = {protocol(value) or value} | ({"TLS 1.2"} if value == "TLSv1.3" else set())
        ep.protocol_line = line
    if "sslCipherSuites" in props:
        ep.add_suites(*props["sslCipherSuites"][:1], props["sslCipherSuites"][1].split(","))
    return [ep]


WEBSEAL_FLAGS = {"disable-ssl-v2": "SSL 2.0", "disable-ssl-v3": "SSL 3.0", "disable-tls-v1": "TLS 1.0",
                 "disable-tls-v11": "TLS 1.1", "disable-tls-v12": "TLS 1.2", "disable-tls-v13": "TLS 1.3"}


def webseal(text: str) -> list[Endpoint]:
    """webseald.conf: the [ssl] stanza's disable-* entries and [ssl-qop-mgmt-default] default entries (cipher
    levels mapped through facts/webseal/qop-ciphers.csv)."""
    entries = stanza.entries(text)
    lines = {(s, k): no for no, s, k, _v in stanza.parse(text)[0]}
    levels = {r["level"]: r["name"] for r in facts_tables.load(FACTS / "webseal" / "qop-ciphers.csv") if r["level"]}
    ep = Endpoint("[ssl]/[ssl-qop-mgmt-default]", protocols=set(),
                  protocol_line=lines.get(("ssl", "disable-tls-v1"), 0))
    for key, name in WEBSEAL_FLAGS.items():
        value = entries.get(("ssl", key), [""])[-1].lower()
        if value == "no":
            ep.protocols.add(name)
        elif not value and name in ("TLS 1.0", "TLS 1.1"):
            ep.problems.append(f"[ssl] has no {key} = yes, so {name} stays on: {_default('WebSEAL disable-tls')}")
    if entries.get(("ssl-qop", "ssl-qop-mgmt"), [""])[-1].lower() != "yes" or not entries.get(
            ("ssl-qop-mgmt-default", "default")):
        ep.problems.append(f"no suite list is written: {_default('WebSEAL ssl-qop')}")
    else:
        no = lines.get(("ssl-qop-mgmt-default", "default"), 0)
        ep.add_suites(no, [levels.get(v, v) for v in entries[("ssl-qop-mgmt-default", "default")]])
    return [ep]


def ctg(text: str) -> list[Endpoint]:
    """ctg.ini: the SSL handler's ciphersuites parameter (read by the project's ctg.ini reader)."""
    params = ctg_ini.entries(text).get(("GATEWAY", "protocol@ssl.parameters"))
    if params is None:
        return []
    ep = Endpoint("protocol@ssl.parameters", protocol_default="CTG protocol", suite_default="CTG ciphersuites")
    line = next((no for no, s, k, _v in ctg_ini.parse(text)[0] if k == "protocol@ssl.parameters"), 0)
    for item in params.split(";"):
        name, _, value = item.strip().partition("=")
        if name == "ciphersuites":
            ep.add_suites(line, [c.strip() for c in value.split(",")])
    return [ep]


def endpoints(path: Path, text: str) -> list[Endpoint]:
    if path.suffix == ".xml":
        return liberty(text)
    if path.suffix == ".ini":
        return ctg(text)
    if path.suffix == ".properties":
        return jdbc(text)
    if path.suffix == ".py":
        return wsadmin(text)
    if path.suffix == ".sh":
        return db2(text)
    if re.search(r"^\s*\[ssl\]\s*$", text, re.M):
        return webseal(text)
    if re.search(r"^\s*SSLEngine\s", text, re.M | re.I):
        return apache(text)
    if re.search(r"^\s*SSLEnable\b", text, re.M):
        return ihs(text)
    return []


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: a file with no TLS configuration the checker knows is a problem too,
    so a glob cannot name a file the checker silently passes."""
    text = path.read_text(encoding="utf-8")
    found = endpoints(path, text)
    if not found:
        return [f"{path.name}: no TLS server configuration this checker reads (Apache, IHS, Liberty, wsadmin, "
                "Db2, JDBC, WebSEAL or CTG)"]
    return [p for ep in found for p in judge(ep)]
