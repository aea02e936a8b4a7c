"""IBM's JDBC driver (IBM Data Server Driver for JDBC and SQLJ, ``com.ibm.db2:jcc``) from Maven Central, pinned
by version and SHA-256, cached under build/cache/jcc/. The Db2 chapter's checks run it for real on a container
host (the folder is mounted read-only at /opt/jcc); the driver's own version line is what its badge names.
"""

from __future__ import annotations

import hashlib
import urllib.request
from pathlib import Path

from zrunbook import BUILD

VERSION = "12.1.5.0"  # prints "IBM Data Server Driver for JDBC and SQLJ 4.38.7"
SHA256 = "04150111a29370247d162c3f05b8e938bf1314f19a63ad9a5302d88dd478e8e8"
URL = f"https://repo1.maven.org/maven2/com/ibm/db2/jcc/{VERSION}/jcc-{VERSION}.jar"
CACHE = BUILD / "cache" / "jcc"
IN_CONTAINER = "/opt/jcc"


def jar() -> Path:
    """The driver's jar, fetched once; an AssertionError naming the address when it cannot be had."""
    path = CACHE / f"jcc-{VERSION}.jar"
    if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() == SHA256:
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(URL, timeout=120) as response:  # noqa: S310 - a fixed https address
            data = response.read()
    except OSError as err:
        raise AssertionError(f"IBM's JDBC driver could not be fetched from {URL} ({err}): the Db2 TLS checks need "
                             f"it; put jcc-{VERSION}.jar in {CACHE} by hand on a machine without network") from err
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise AssertionError(f"{URL} has SHA-256 {digest}, not the pinned {SHA256}: refusing to run it")
    tmp = path.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path
