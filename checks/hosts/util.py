"""Small helpers of the host checks: copy text into a container, show a command's result, compile Java there."""

from __future__ import annotations

import base64
import shlex
from pathlib import Path


def output(result) -> str:
    return f"rc={result.rc}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def ok(host, cmd: str) -> str:
    """Run cmd; its stdout, or an AssertionError naming the command and its whole result."""
    res = host.run(cmd)
    assert res.rc == 0, f"{cmd}\n{output(res)}"
    return res.stdout


def copy_to(host, text: str | bytes, path: str) -> None:
    """Write text (or bytes) to path inside the container, creating its directory."""
    data = text.encode() if isinstance(text, str) else text
    encoded = base64.b64encode(data).decode()
    host.run_expect([0], f"mkdir -p {shlex.quote(str(Path(path).parent))} && "
                  f"echo {encoded} | base64 -d > {shlex.quote(path)}")



def compile_java(host, source: str) -> None:
    """Compile a check's Java source to classes beside it, with the JDK compiler the host's runtime
    carries (jdk.compiler; the image has no javac). Done once in a prepared state, so each test starts
    the class instead of compiling the source again (``java X.java`` compiles on every launch: most of a
    JVM start under qemu)."""
    folder = str(Path(source).parent)
    host.run_expect([0], f"java -m jdk.compiler/com.sun.tools.javac.Main -d {shlex.quote(folder)} {shlex.quote(source)}"
                  f" && chmod -R a+rX {shlex.quote(folder)}")

