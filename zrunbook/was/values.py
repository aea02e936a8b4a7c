"""Values the WebSphere pages state, computed at build time from the snippets and the pinned runtime.

Used as {value}`was:<function>` on the pages (docs/_ext/facts.py).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from zrunbook import SNIPPETS
from zrunbook import facts as facts_tables

LIBERTY_SERVER = "was/liberty/server.xml"
JVM_OPTIONS = "was/liberty/jvm.options"
JDK_GROUPS = "was/jdk-tls-groups"
DEPENDS_ON = [f"snippets/{LIBERTY_SERVER}", f"snippets/{JVM_OPTIONS}", f"facts/{JDK_GROUPS}.csv",
              "zrunbook/was/liberty.py"]


def liberty_version() -> str:
    from zrunbook.was import liberty
    return liberty.VERSION


def liberty_port() -> str:
    root = ET.parse(SNIPPETS / LIBERTY_SERVER).getroot()
    return root.find("httpEndpoint").get("httpsPort")


def liberty_named_groups_list() -> list[str]:
    """The groups jvm.options names in jdk.tls.namedGroups, in order."""
    from zrunbook.was import jdk_groups
    return jdk_groups.named_groups((SNIPPETS / JVM_OPTIONS).read_text(encoding="utf-8"))


def liberty_named_groups() -> str:
    return ", ".join(liberty_named_groups_list())


def jdk_with_hybrid_default() -> str:
    """The first JDK the facts table says puts X25519MLKEM768 in JSSE's default list."""
    rows = [r for r in facts_tables.table(JDK_GROUPS) if r["X25519MLKEM768 in the default list"].startswith("yes")]
    if not rows:
        raise ValueError(f"no JDK in {JDK_GROUPS} has X25519MLKEM768 by default")
    return rows[0]["JDK"]
