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

