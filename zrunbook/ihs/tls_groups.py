"""The key-exchange groups of the Apache TLS sites, read from the snippets (the post-quantum page's one source).

``site_groups(path)``: the groups a site's ``SSLOpenSSLConfCmd Groups`` line names, in order, without OpenSSL
3.5's ``?`` (skip the group where no provider offers it); ``groups_line(path)`` the line's list as written,
``optional_groups(path)`` those marked ``?``. ``HYBRID`` is the
post-quantum hybrid group OpenSSL 3.5 added (X25519 with ML-KEM-768); ``needs_openssl(groups)`` the oldest OpenSSL
that accepts the list (an OpenSSL that does not know a group refuses the whole line, and httpd does not start).
``openssl_releases()`` reads facts/crypto/openssl-versions.csv: per distribution, the OpenSSL it ships as a
(major, minor) pair, or None where the table says unconfirmed.
"""

from __future__ import annotations

import re
from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook import facts as facts_tables

HYBRID = "X25519MLKEM768"
HYBRID_SINCE = (3, 5)  # OpenSSL 3.5.0 added ML-KEM and the hybrid groups (its CHANGES.md)
# The Apache sites whose key exchange the post-quantum page describes; the first two are the OpenSSL and token pages'.
SITES = ("ihs/apache/apache-tls-openssl.conf", "ihs/apache/apache-tls-pkcs11.conf",
         "ihs/apache/apache-tls-pkcs11-ecdsa.conf", "webseal/apache/apache-ssl-junction.conf")
BEFORE_3_5 = "ihs/apache/groups-before-openssl-3.5.conf"  # the line for OpenSSL 3.0 to 3.4
_GROUPS = re.compile(r"^\s*SSLOpenSSLConfCmd\s+Groups\s+(\S+)\s*$", re.M)


def groups_line(path: str | Path) -> str:
    """The list of the one Groups line in a snippet, as written (with any ``?``)."""
    text = (SNIPPETS / path).read_text(encoding="utf-8")
    lines = _GROUPS.findall(text)
    if len(lines) != 1:
        raise ValueError(f"{path}: {len(lines)} SSLOpenSSLConfCmd Groups lines, expected one")
    return lines[0]


def site_groups(path: str | Path) -> list[str]:
    """The groups of the one Groups line in a snippet, in the server's order of preference."""
    return [g.removeprefix("?") for g in groups_line(path).split(":")]


def optional_groups(path: str | Path) -> list[str]:
    return [g[1:] for g in groups_line(path).split(":") if g.startswith("?")]


def needs_openssl(line: str) -> tuple[int, int]:
    """The oldest OpenSSL that accepts a Groups list: 3.5 for the hybrid group or a "?" (both new in 3.5)."""
    return HYBRID_SINCE if HYBRID in line or "?" in line else (3, 0)


def version(text: str) -> tuple[int, int] | None:
    """(major, minor) of the first version number in a table cell or in `openssl version`'s output."""
    m = re.search(r"(?<![\d.])(\d+)\.(\d+)(?:\.\d+)?", text)
    return (int(m.group(1)), int(m.group(2))) if m and not text.startswith("unconfirmed") else None


def openssl_releases() -> list[tuple[str, tuple[int, int] | None]]:
    return [(r["distribution"], version(r["OpenSSL"])) for r in facts_tables.table("crypto/openssl-versions")]
