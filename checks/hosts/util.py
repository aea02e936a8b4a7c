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


# The checks testssl.sh 3.2 itself requires before it rates a server (its set_rating_state: protocols, cipher
# lists, forward secrecy, server defaults, headers, twelve vulnerability checks and the ciphers per protocol),
# named instead of its default run, which adds the client simulations, the server's cipher order and the
# vulnerability checks no grade reads: the same grade and caps in 32 s instead of 59 s (the Apache OpenSSL site,
# 2026-11-26; `make bench WHAT=hosts BENCH=whole` is the suite's own clock). Used by every testssl run in checks/.
TESTSSL_RATING_CHECKS = "-p -s -f -S -h -H -I -T -BB -R -C -O -Z -D -A -4 -J -E"
