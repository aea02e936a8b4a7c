"""Shell lint: a snippet must not switch off TLS certificate verification.

``curl -k`` / ``--insecure`` (also inside a cluster such as ``-sk``), ``--proxy-insecure`` and
``wget --no-check-certificate`` accept any certificate, so a check run with them proves nothing about
the certificate the reader installed (the 2013 study's ``curl -k -v``). shellcheck has no rule for this.
``problems(text)`` returns one line per offending option (empty when fine); comments are ignored.
"""

from __future__ import annotations

import re
import shlex

# curl's short options that take an argument: in "-ok" the k is the output file's name, not --insecure.
CURL_SHORT_WITH_ARGUMENT = set("AbcCdDeEFHKmoPQrtTuUwxXyYz")
INSECURE = {"curl": {"-k", "--insecure", "--proxy-insecure"}, "wget": {"--no-check-certificate"}}
SEPARATORS = {";", "&", "&&", "|", "||", "(", ")", ");", "$(", "`"}
# Words after which the next word is still in command position.
PREFIXES = {"if", "then", "else", "elif", "do", "while", "until", "!", "time", "exec", "command", "sudo", "env"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _logical_lines(text: str):
    buf, start = "", 0
    for no, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = no
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        yield start, buf + line
        buf = ""
    if buf:
        yield start, buf


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
    for no, line in _logical_lines(text):
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, "#"
        try:
            words = list(lexer)
        except ValueError:
            continue  # shellcheck reports unparsable lines
        tool, command_position = None, True
        for word in words:
            if word in SEPARATORS or set(word) <= set(";&|()"):
                tool, command_position = None, True
                continue
            if command_position:
                if word in PREFIXES or ASSIGNMENT.match(word):
                    continue  # "out=$(" or "sudo": the command is still to come
                name = word.rsplit("/", 1)[-1]
                tool, command_position = (name if name in INSECURE else None), False
                continue
            if tool and (word in INSECURE[tool] or (tool == "curl" and _curl_cluster_has_k(word))):
                found.append(f"line {no}: {tool} {word} accepts any certificate: verify against the CA instead "
                             "(curl --cacert FILE)")
    return found
