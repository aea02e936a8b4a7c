"""The web server plug-in's TLS leg from IBM HTTP Server to the application server, with IBM's GSKit as the client:
the one place where a plugin-cfg.xml ``<Transport>`` fragment becomes GSKit attributes.

IBM's plug-in binary cannot be installed here, but the TLS library it is built on can (GSKit 8.0.60.5 from PyPI's
ibm_db wheel, zrunbook/clidriver.py). ``gskconnect`` (checks/standins/ihs/gskit_client/gskconnect.c) is a small TLS
client on GSKit's SSL API that knows no plugin-cfg.xml; ``transport(xml)`` reads the fragment and ``attributes(t)``
maps it:

==========================================  ============================================================
plugin-cfg.xml                              GSKit attribute (facts/ihs/gskit-attributes.csv: numbers, sources)
==========================================  ============================================================
``<Transport Hostname= Port=>``             where gskconnect connects (not an attribute)
``<Transport Protocol="https">``            TLS at all; any other protocol is refused here
``<Property Name="keyring" Value=PATH>``    GSK_KEYRING_FILE PATH (the signers that validate the server)
``<Property Name="stashfile" Value=PATH>``  GSK_KEYRING_STASH_FILE PATH
``<Property Name="certLabel" Value=L>``     GSK_KEYRING_LABEL L (a client certificate; none by default)
(nothing)                                   GSK_PROTOCOL_TLSV12 and _TLSV13 on, SSL 2, 3, TLS 1.0, 1.1 off
==========================================  ============================================================

The last row is this mapping's choice, not the plug-in's: GSKit 8.0.60.5 with no protocol attribute cannot reach a
server that allows only TLS 1.2 and 1.3 (the runbook's check shows it failing), and which protocols and suites IBM's
plug-in offers by default could not be confirmed for WAS 9.0.5 (the page says so). ``build(host)`` compiles
gskconnect on a container host where the wheel's folder is mounted at clidriver.IN_CONTAINER; ``command(...)`` is
the shell command that opens COUNT connections there; ``results(text)`` reads its lines.

Session reuse: GSKit's client keeps a session under the name its socket gives in GSK_PEER_ID and offers it again only
to a connection that gives the same name (TLS 1.3 also needs GSK_SSL_EXTN_SESSIONTICKET_ENABLE; a Java server resumes
a TLS 1.2 session only when it used the extended master secret, GSK_SSL_EXTN_EXTENDEDMASTERSECRET_CLIENT_ENABLE). The
mapping sets none of them, because whether IBM's plug-in does could not be confirmed; ``resuming(t)`` adds them (the
peer ID names ``host:port`` in at most 16 bytes, the first 16 hex digits of its SHA-256, set on each connection's
socket: gskconnect's ``s:`` form), for the check that measures the difference.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from checks.standins.ihs import gskit_server

SOURCE = Path(__file__).resolve().parent / "gskit_client" / "gskconnect.c"
PROPERTIES = {"keyring": "GSK_KEYRING_FILE", "stashfile": "GSK_KEYRING_STASH_FILE", "certLabel": "GSK_KEYRING_LABEL"}
# this mapping's protocol choice: (attribute, value)
PROTOCOLS = (("GSK_PROTOCOL_SSLV2", "511"), ("GSK_PROTOCOL_SSLV3", "513"), ("GSK_PROTOCOL_TLSV1", "519"),
             ("GSK_PROTOCOL_TLSV11", "0"), ("GSK_PROTOCOL_TLSV12", "1"), ("GSK_PROTOCOL_TLSV13", "1"))
PEER_ID_MAX = 16  # GSKit 8.0.60.5 refuses a longer GSK_PEER_ID with 708 GSK_PEERID_LENGTH_ERROR (measured)
PER_SOCKET = {"GSK_PEER_ID"}  # set on each connection's socket handle, not on the environment
LINE = re.compile(r"^connection (\d+): (\d+) (?:protocol=(\d+) cipher=(\S+) resumed=(yes|no)|(\S+))")


@dataclass(frozen=True)
class Transport:
    host: str
    port: int
    properties: dict[str, str]


def transport(xml: str) -> Transport:
    """The one ``<Transport>`` of the fragment (comments allowed around it); AssertionError for anything else."""
    root = ET.fromstring(xml)
    assert root.tag == "Transport", f"the fragment is a <{root.tag}>, not a <Transport>"
    assert root.get("Protocol") == "https", f"Protocol={root.get('Protocol')!r}: the plug-in uses TLS only for https"
    props = {p.get("Name"): p.get("Value") for p in root.findall("Property")}
    unknown = set(props) - set(PROPERTIES)
    assert not unknown, f"properties this mapping does not know: {sorted(unknown)}"
    return Transport(root.get("Hostname"), int(root.get("Port")), props)


def attributes(t: Transport, **override: str) -> list[gskit_server.Setting]:
    """GSKit attributes for the transport, in the order set (override: a property's value replaced, for a check)."""
    props = t.properties | override
    found = [gskit_server.Setting(PROPERTIES[name], value, f'Property Name="{name}"') for name, value in props.items()]
    return found + [gskit_server.Setting(a, v, "this mapping's choice") for a, v in PROTOCOLS]


def resuming(t: Transport) -> list[gskit_server.Setting]:
    """The settings that let GSKit's client offer an earlier session that the server accepts: added to attributes(t) by
    the reuse check."""
    peer = hashlib.sha256(f"{t.host}:{t.port}".encode()).hexdigest()[:PEER_ID_MAX]
    return [gskit_server.Setting("GSK_PEER_ID", peer, "each connection names its server"),
            gskit_server.Setting("GSK_SSL_EXTN_SESSIONTICKET_ENABLE", "1", "TLS 1.3 session tickets"),
            gskit_server.Setting("GSK_SSL_EXTN_EXTENDEDMASTERSECRET_CLIENT_ENABLE", "1", "TLS 1.2: a Java server "
                                 "resumes only sessions with the extended master secret")]


def _arg(s: gskit_server.Setting, table: dict[str, tuple[str, int]]) -> str:
    return f"s:{table[s.attribute][1]}={s.value}" if s.attribute in PER_SOCKET else s.arg(table)


def command(t: Transport, binary: str, count: int, settings: list[gskit_server.Setting] | None = None) -> str:
    table = gskit_server.ids()
    args = " ".join(shlex.quote(_arg(s, table)) for s in (settings if settings is not None else attributes(t)))
    return f"{gskit_server.ENV} {binary} {shlex.quote(t.host)} {t.port} {count} {args}"


def results(text: str) -> list[dict]:
    """gskconnect's lines: [{n, rc, protocol, cipher, resumed} or {n, rc, error}]."""
    found = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            n, rc, protocol, cipher, resumed, error = m.groups()
            found.append({"n": int(n), "rc": int(rc), "protocol": gskit_server.PROTOCOL_USED.get(int(protocol or 0)),
                          "cipher": cipher, "resumed": resumed == "yes", "error": error})
    return found


def build(host) -> str:
    """gskconnect compiled on the host against the mounted wheel's GSKit, once per source version; its path."""
    source = SOURCE.read_bytes()
    folder = f"/var/tmp/zr-gskconnect-{hashlib.sha256(source).hexdigest()[:12]}"
    binary = f"{folder}/gskconnect"
    if host.run(f"test -x {binary}").rc == 0:
        return binary
    host.run_expect([0], f"mkdir -p {folder} && echo {base64.b64encode(source).decode()} | base64 -d > "
                         f"{folder}/gskconnect.c")
    res = host.run(f"gcc -O2 -Wall -o {binary} {folder}/gskconnect.c -L{gskit_server.ICC} -l:libgsk8ssl_64.so")
    assert res.rc == 0, f"gcc could not build gskconnect against {gskit_server.ICC}:\n{res.stdout}\n{res.stderr}"
    return binary
