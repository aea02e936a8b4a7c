"""Helpers shared by the WebSphere chapter's checks: copy text into a container, show a command's result."""

from __future__ import annotations

import base64
import shlex
from pathlib import Path

HERE = Path(__file__).resolve().parent


def output(result) -> str:
    return f"rc={result.rc}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def copy_to(host, text: str | bytes, path: str) -> None:
    """Write text (or bytes) to path inside the container, creating its directory."""
    data = text.encode() if isinstance(text, str) else text
    encoded = base64.b64encode(data).decode()
    host.run_test(f"mkdir -p {shlex.quote(str(Path(path).parent))} && "
                  f"echo {encoded} | base64 -d > {shlex.quote(path)}")


def let_pkcs11_group_write_tokens(host) -> None:
    """The token directories the image's openCryptoki left as root:root 0755 (swtok, lite = ICA token): without
    group write, a pkcs11 member such as wasadmin fails to store a key (CKR_FUNCTION_FAILED). See the report."""
    host.run_test("for d in /var/lib/opencryptoki/swtok /var/lib/opencryptoki/lite; do "
                  "[ -d $d ] && chgrp -R pkcs11 $d && chmod -R g+rwX $d; done; true")
