"""Shell lint: a snippet must not switch off TLS certificate verification.

``curl -k`` / ``--insecure`` (also inside a cluster such as ``-sk``), ``--proxy-insecure`` and
``wget --no-check-certificate`` accept any certificate, so a check run with them proves nothing about
the certificate the reader installed (the 2013 study's ``curl -k -v``). shellcheck has no rule for this.
``problems(text)`` returns one line per offending option (empty when fine); comments are ignored.
"""

from __future__ import annotations

from pathlib import Path

from zrunbook import shell

# curl's short options that take an argument: in "-ok" the k is the output file's name, not --insecure.
CURL_SHORT_WITH_ARGUMENT = set("AbcCdDeEFHKmoPQrtTuUwxXyYz")
INSECURE = {"curl": {"-k", "--insecure", "--proxy-insecure"}, "wget": {"--no-check-certificate"}}


def _curl_cluster_has_k(word: str) -> bool:
    if not word.startswith("-") or word.startswith("--") or len(word) < 2:
        return False
    for letter in word[1:]:
        if letter == "k":
            return True
        if letter in CURL_SHORT_WITH_ARGUMENT:
            return False
    return False


def problems(text: str) -> list[str]:
    found: list[str] = []
    for cmd in shell.commands(text):  # a line the lexer cannot read is shellcheck's to report
        tool = cmd.name
        for word in cmd.args if tool in INSECURE else ():
            if word in INSECURE[tool] or (tool == "curl" and _curl_cluster_has_k(word)):
                found.append(f"line {cmd.line}: {tool} {word} accepts any certificate: verify against the CA "
                             "instead (curl --cacert FILE)")
    return found


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point."""
    return problems(path.read_text(encoding="utf-8"))
