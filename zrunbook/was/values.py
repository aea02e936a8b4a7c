"""Values the WebSphere pages state, computed at build time from the snippets and the pinned runtime.

Used as {value}`was:<function>` on the pages (docs/_ext/facts.py).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from zrunbook import SNIPPETS

LIBERTY_SERVER = "was/liberty/server.xml"
DEPENDS_ON = [f"snippets/{LIBERTY_SERVER}", "zrunbook/was/liberty.py"]


def liberty_version() -> str:
    from zrunbook.was import liberty
    return liberty.VERSION


def liberty_port() -> str:
    root = ET.parse(SNIPPETS / LIBERTY_SERVER).getroot()
    return root.find("httpEndpoint").get("httpsPort")
