"""Reading shell scripts without running them: continued lines joined, and the commands with their arguments.

The validators that read shell snippets (Db2 CLP calls, GSKit, pdadmin, the insecure-TLS lint) and the
continued lines of ctg.ini all start here, so a construct is read the same way everywhere.

* ``logical_lines(text)``: physical lines joined where one ends with ``\\``, each with the number of its first
  line and the lines it was joined from (ctg.ini checks where a line was split).
* ``parse(text)``: every simple command of a script, split at ``;``, ``&&``, ``||``, ``|``, ``&``, ``(``, ``)``
  and ``$(``, after the words that keep the command position (``if``, ``then``, ``!``, ``sudo``, ``exec`` ...)
  and the ``NAME=value`` assignments before it; its words end at the first redirection. Quotes are removed,
  variables are not expanded. A line the lexer cannot read (an unclosed quote) is returned in ``unparsable``
  with the lexer's message; the caller decides whether that is a problem (shellcheck reports it anyway).

The words come from the standard library's ``shlex`` (POSIX mode, operators as words of their own, ``#``
comments dropped), line by line. bashlex (PyPI, 0.18), the maintained bash parser, was tried first: it
rejects 27 of the 68 shell snippets and negative cases, on constructs the runbook uses throughout: ``[[ ... ]]``
conditionals, array assignments ``a=(...)``, ``case`` patterns (NotImplementedError) and ``$(( ))``
arithmetic; and the study's broken lines (an unclosed quote) must still yield the other lines' commands.
Here-document bodies are read as lines like any other (a caller that knows the document reads it itself).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

# Words after which the next word is still in command position.
PREFIXES = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "time", "exec", "command",
                      "sudo", "env", "{", "}"})
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
SEPARATOR = frozenset(";&|()`")
REDIRECTION = re.compile(r"^[0-9]*(<<<|<<-|<<|<>|<&|>&|>>|>\||<|>|&>>|&>)$")


@dataclass(frozen=True)
class LogicalLine:
    line: int  # number of its first physical line (1-based)
    text: str  # the physical lines joined, each trailing backslash replaced by the joiner
    breaks: tuple[tuple[int, str], ...] = ()  # (number, text before the backslash) of each line continued
    unfinished: bool = False  # the text ends with a backslash and nothing follows


def logical_lines(text: str, *, joiner: str = " ", strip: bool = False) -> list[LogicalLine]:
    """Lines joined at a trailing backslash (trailing blanks after it ignored).

    ``strip`` strips every physical line first (ctg.ini: continued values are joined without blanks).
    """
    out: list[LogicalLine] = []
    buf, start, breaks = "", 0, []
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip() if strip else raw
        if not buf and not breaks:
            start = no
        if line.rstrip().endswith("\\"):
            body = line.rstrip()[:-1]
            body = body.rstrip() if strip else body
            breaks.append((no, body))
            buf += body + joiner
            continue
        out.append(LogicalLine(start, buf + line, tuple(breaks)))
        buf, breaks = "", []
    if breaks:
        out.append(LogicalLine(start, buf, tuple(breaks), unfinished=True))
    return out


def words(line: str) -> list[str]:
    """The shell words of one line: quotes removed, operators as words of their own, a ``#`` comment dropped.

    Raises ValueError (the lexer's message, e.g. "No closing quotation") when the line cannot be read."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, "#"
    return list(lexer)


@dataclass(frozen=True)
class Command:
    line: int  # the first physical line of the logical line it stands on
    words: tuple[str, ...]  # the program and its arguments, up to the first redirection
    text: str  # the logical line it stands on, stripped

    @property
    def name(self) -> str:
        """The program's name without its directory (``/usr/bin/curl`` -> ``curl``)."""
        return self.words[0].rsplit("/", 1)[-1]

    @property
    def args(self) -> list[str]:
        return list(self.words[1:])


@dataclass(frozen=True)
class Unparsable:
    line: int
    text: str
    error: str


@dataclass(frozen=True)
class Script:
    commands: list[Command]
    unparsable: list[Unparsable]


def _is_separator(word: str) -> bool:
    return set(word) <= SEPARATOR or word == "$("


def _simple_commands(tokens: list[str]) -> list[list[str]]:
    """Split a line's words into simple commands: prefixes and assignments dropped, words cut at a redirection.

    The lexer splits "2>/dev/null" into "2", ">", "/dev/null": a number right before a redirection is its
    descriptor, not an argument."""
    found: list[list[str]] = []
    current: list[str] | None = None  # None: in command position
    redirected = False
    i = 0
    while i < len(tokens):
        word = tokens[i]
        if _is_separator(word) or (word.endswith("$") and tokens[i + 1:i + 2] == ["("]):
            # "out=$" "(" ...: a command substitution; its command follows the "("
            current, redirected = None, False
        elif current is None:
            if ASSIGNMENT.match(word) and word.endswith("=") and tokens[i + 1:i + 2] == ["("]:  # an array a=(x y)
                i = next((k for k in range(i + 2, len(tokens)) if tokens[k].startswith(")")), len(tokens))
            elif REDIRECTION.match(word):  # "> file cmd": the file is no command
                i += 1
            elif word not in PREFIXES and not ASSIGNMENT.match(word):
                current = [word]
                found.append(current)
        elif REDIRECTION.match(word):
            if not redirected and len(current) > 1 and current[-1].isdigit() and tokens[i - 1] == current[-1]:
                current.pop()
            redirected = True
        elif not redirected:
            current.append(word)
        i += 1
    return found


def parse(text: str) -> Script:
    """Every simple command of a shell script, in order, and the lines the lexer could not read."""
    commands: list[Command] = []
    unparsable: list[Unparsable] = []
    for logical in logical_lines(text):
        stripped = logical.text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            tokens = words(stripped)
        except ValueError as exc:
            unparsable.append(Unparsable(logical.line, stripped, str(exc)))
            continue
        commands += [Command(logical.line, tuple(cmd), stripped) for cmd in _simple_commands(tokens)]
    return Script(commands, unparsable)


def commands(text: str) -> list[Command]:
    """``parse(text).commands``."""
    return parse(text).commands
