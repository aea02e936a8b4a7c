"""What a TLS client offered, read from ``openssl s_server -msg`` output: the ClientHello's cipher suites (by
their two-byte codes) and the protocol versions of its supported_versions extension (RFC 8446, 4.2.1; without
it, the legacy version field). The Db2 chapter's checks use it to prove what IBM's JDBC driver offers.

``parse(msg_output)`` returns an ``Offer`` (suites, versions, and the key-exchange groups of supported_groups and
key_share) or None when the output holds no ClientHello (a client that did not
speak TLS at all). ``names(openssl_ciphers_v)`` maps codes to IANA names from ``openssl ciphers -V -stdname``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VERSIONS = {0x0304: "TLSv1.3", 0x0303: "TLSv1.2", 0x0302: "TLSv1.1", 0x0301: "TLSv1.0", 0x0300: "SSLv3"}
SCSV = {0x00FF, 0x5600}  # TLS_EMPTY_RENEGOTIATION_INFO_SCSV, TLS_FALLBACK_SCSV: signals, not suites
HEX_LINE = re.compile(r"^\s+((?:[0-9a-f]{2} ?)+)\s*$")


@dataclass(frozen=True)
class Offer:
    suites: tuple[int, ...]  # cipher suite codes in the client's order, signalling values left out
    versions: tuple[str, ...]  # protocol versions offered, highest first as the client sent them
    groups: tuple[int, ...] = ()  # supported_groups (RFC 8446, 4.2.7) in the client's order, GREASE left out
    key_shares: tuple[int, ...] = ()  # the groups of the key_share extension's entries (4.2.8)


# Key-exchange group code points (IANA TLS Supported Groups registry) for the names the checks print
GROUPS = {0x0017: "secp256r1", 0x0018: "secp384r1", 0x0019: "secp521r1", 0x001D: "x25519", 0x001E: "x448",
          0x0100: "ffdhe2048", 0x0101: "ffdhe3072", 0x0102: "ffdhe4096", 0x0103: "ffdhe6144", 0x0104: "ffdhe8192",
          0x0200: "MLKEM512", 0x0201: "MLKEM768", 0x0202: "MLKEM1024", 0x11EB: "SecP256r1MLKEM768",
          0x11EC: "X25519MLKEM768", 0x11ED: "SecP384r1MLKEM1024"}
ML_KEM = {code for code, name in GROUPS.items() if "MLKEM" in name}


def _grease(code: int) -> bool:
    return code & 0x0F0F == 0x0A0A and code >> 8 == code & 0xFF


def _client_hello_bytes(text: str) -> bytes | None:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("<<<") and line.rstrip().endswith("ClientHello"):
            data = bytearray()
            for more in lines[i + 1:]:
                m = HEX_LINE.match(more)
                if not m:
                    break
                data += bytes.fromhex(m.group(1))
            return bytes(data)
    return None


def parse(text: str) -> Offer | None:
    data = _client_hello_bytes(text)
    if data is None:
        return None
    if len(data) < 39 or data[0] != 1:
        raise ValueError("the message after 'ClientHello' is not a ClientHello handshake message")
    at = 4
    legacy = int.from_bytes(data[at:at + 2], "big")
    at += 2 + 32
    at += 1 + data[at]  # session id
    n = int.from_bytes(data[at:at + 2], "big")
    codes = [int.from_bytes(data[at + 2 + i:at + 4 + i], "big") for i in range(0, n, 2)]
    at += 2 + n
    at += 1 + data[at]  # compression methods
    versions = [VERSIONS.get(legacy, hex(legacy))]
    groups: list[int] = []
    shares: list[int] = []
    if at + 2 <= len(data):
        end = at + 2 + int.from_bytes(data[at:at + 2], "big")
        at += 2
        while at + 4 <= end:
            kind, size = int.from_bytes(data[at:at + 2], "big"), int.from_bytes(data[at + 2:at + 4], "big")
            body = data[at + 4:at + 4 + size]
            if kind == 0x000A:  # supported_groups: a two-byte length, then two bytes a group
                size_of_list = int.from_bytes(body[:2], "big")
                groups = [int.from_bytes(body[2 + i:4 + i], "big") for i in range(0, size_of_list, 2)]
            elif kind == 0x0033:  # key_share: a two-byte length, then (group, two-byte length, key) entries
                shares, i = [], 2
                while i + 4 <= len(body):
                    shares.append(int.from_bytes(body[i:i + 2], "big"))
                    i += 4 + int.from_bytes(body[i + 2:i + 4], "big")
            if kind == 0x002B:  # supported_versions: one length byte, then two bytes a version
                versions = [VERSIONS.get(int.from_bytes(body[1 + i:3 + i], "big"), body[1 + i:3 + i].hex())
                            for i in range(0, body[0], 2)
                            if body[1 + i] & 0x0F != 0x0A]  # GREASE values (0x?A?A) are not versions
            at += 4 + size
    return Offer(tuple(c for c in codes if c not in SCSV), tuple(versions), tuple(g for g in groups if not _grease(g)),
                 tuple(g for g in shares if not _grease(g)))


# TLS 1.3 suites (RFC 8446, B.4) that ``openssl ciphers`` does not list by default; GSKit offers them
TLS13_CCM = {0x1304: "TLS_AES_128_CCM_SHA256", 0x1305: "TLS_AES_128_CCM_8_SHA256"}
CIPHER_LINE = re.compile(r"^\s*0x([0-9A-F]{2}),0x([0-9A-F]{2})\s+-\s+(\S+)", re.M)


def names(openssl_ciphers_v: str) -> dict[int, str]:
    """Code -> IANA name from ``openssl ciphers -V -stdname``.

    Its lines look like ``0x13,0x02 - TLS_AES_256_GCM_SHA384 - ...``."""
    return TLS13_CCM | {int(a + b, 16): name for a, b, name in CIPHER_LINE.findall(openssl_ciphers_v)}


# Db2's SSL_VERSIONS words and the protocol names of a ClientHello.
DB2_VERSIONS = {"TLSV13": "TLSv1.3", "TLSV12": "TLSv1.2", "TLSV1": "TLSv1.0"}


def promise_problems(offer: Offer | None, suite_names: dict[int, str], client: dict[str, str],
                     server: dict[str, str]) -> list[str]:
    """What the driver offered against what the Db2 pages promise: TLS at all; exactly the suites of the client's
    sslCipherSuites; protocols the server's SSL_VERSIONS accepts, the highest of them among them; and every TLS 1.2
    suite offered one the server's SSL_CIPHERSPECS allows (TLS 1.3 suites are not in Db2's list). ``client``: the
    driver properties; ``server``: the UPDATE DBM CFG values of the server page's script."""
    if offer is None:
        return ["the driver sent no TLS ClientHello: the connection (and the user's password) went in clear"]
    problems = []
    offered = [suite_names.get(code, f"0x{code:04X}") for code in offer.suites]
    wanted = [s.strip() for s in client.get("sslCipherSuites", "").split(",") if s.strip()]
    if sorted(offered) != sorted(wanted):
        extra, missing = sorted(set(offered) - set(wanted)), sorted(set(wanted) - set(offered))
        problems.append(f"the driver offered suites beyond sslCipherSuites {extra} or left out {missing}"
                        if wanted else f"no sslCipherSuites: the driver offered the JDK's defaults {offered}")
    problems += version_problems(offer, server)
    specs = set(server.get("SSL_CIPHERSPECS", "").upper().split(","))
    tls12 = [s for s in offered if s.startswith("TLS_") and "_WITH_" in s]
    outside = [s for s in tls12 if s not in specs]
    if specs != {""} and outside:
        problems.append(f"TLS 1.2 suites offered that the server's SSL_CIPHERSPECS does not allow: {outside}")
    return problems


def version_problems(offer: Offer, server: dict[str, str]) -> list[str]:
    """The protocols offered against the server's SSL_VERSIONS: none it does not accept, and its highest among them."""
    accepted = [DB2_VERSIONS[v] for v in server.get("SSL_VERSIONS", "").upper().split(",") if v in DB2_VERSIONS]
    problems = []
    older = [v for v in offer.versions if v not in accepted]
    if older:
        problems.append(f"the driver offered {older}, which the server's SSL_VERSIONS {accepted} does not accept")
    if accepted and accepted[0] not in offer.versions:
        problems.append(f"the driver did not offer {accepted[0]}, the highest protocol the server accepts")
    return problems
