"""IBM's JDBC driver (IBM Data Server Driver for JDBC and SQLJ, ``com.ibm.db2:jcc``) from Maven Central, pinned
by version and SHA-256, cached under build/cache/jcc/. The Db2 chapter's checks run it for real on a container
host (the folder is mounted read-only at /opt/jcc); the driver's own version line is what its badge names.
"""

from __future__ import annotations

from pathlib import Path

from zrunbook import BUILD, fetch

VERSION = "12.1.5.0"  # prints "IBM Data Server Driver for JDBC and SQLJ 4.38.7"
SHA256 = "04150111a29370247d162c3f05b8e938bf1314f19a63ad9a5302d88dd478e8e8"
URL = f"https://repo1.maven.org/maven2/com/ibm/db2/jcc/{VERSION}/jcc-{VERSION}.jar"
CACHE = BUILD / "cache" / "jcc"
IN_CONTAINER = "/opt/jcc"


def jar() -> Path:
    """The driver's jar, fetched once and checked against its pin (zrunbook/fetch.py)."""
    return fetch.pinned(URL, SHA256, CACHE / f"jcc-{VERSION}.jar")
