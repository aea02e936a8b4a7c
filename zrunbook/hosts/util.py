"""Helpers shared by the WebSphere chapter's checks: copy text into a container, show a command's result."""

from __future__ import annotations

import base64
import shlex
from pathlib import Path

# The WebSphere chapter's test token (test data, never in snippets/).
TOKEN = {"TOKEN_LABEL": "IBMICATOK", "TOKEN_SO_PIN": "87650000", "TOKEN_USER_PIN": "24681357"}


def output(result) -> str:
    return f"rc={result.rc}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def copy_to(host, text: str | bytes, path: str) -> None:
    """Write text (or bytes) to path inside the container, creating its directory."""
    data = text.encode() if isinstance(text, str) else text
    encoded = base64.b64encode(data).decode()
    host.run_test(f"mkdir -p {shlex.quote(str(Path(path).parent))} && "
                  f"echo {encoded} | base64 -d > {shlex.quote(path)}")



def ready_was_token(host) -> None:
    """The crypto chapter's steps as the WAS pages ask for them: pkcsslotd, the token initialised with
    init-token.sh, wasadmin in pkcs11, the token folders opened to the group (the reader's step)."""
    from zrunbook.hosts.steps import run_snippet, snippet_path, start_pkcsslotd

    start_pkcsslotd(host)
    env = " ".join(f"{k}={v}" for k, v in TOKEN.items())
    init = host.run(f"{env} bash {snippet_path('crypto/token/init-token.sh')}")
    assert init.rc == 0, output(init)
    host.run_test("id wasadmin || useradd -m wasadmin")
    added = run_snippet(host, "crypto/pkcs11-group/add-user-to-pkcs11-group.sh", "wasadmin")
    assert added.rc == 0, output(added)
    opened = run_snippet(host, "crypto/token/let-pkcs11-group-store-keys.sh")
    assert opened.rc == 0, output(opened)


def compile_java(host, source: str) -> None:
    """Compile a check's Java source to classes beside it, with the JDK compiler the host's runtime
    carries (jdk.compiler; the image has no javac). Done once in a prepared state, so each test starts
    the class instead of compiling the source again (``java X.java`` compiles on every launch: most of a
    JVM start under qemu)."""
    folder = str(Path(source).parent)
    host.run_test(f"java -m jdk.compiler/com.sun.tools.javac.Main -d {shlex.quote(folder)} {shlex.quote(source)}"
                  f" && chmod -R a+rX {shlex.quote(folder)}")
