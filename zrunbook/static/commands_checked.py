"""Shell lint: a snippet checks for every program it calls that a minimal system lacks, and says how to get it.

A reader on a clean machine met ``pgrep: command not found`` and exit 127 halfway through a step (issue 17). So
every program a snippet calls that is not on a minimal Debian 13 (debootstrap's minbase variant) must be looked
for first with ``command -v NAME`` (directly, or in a ``for NAME in A B; do command -v "$NAME"`` loop), and the
line that does so must say what to do: name a package or product to install, or the profile to source.

* ``minimal()``: what bash can call on the minimal system (builtins, keywords, programs on root's PATH), read
  from ``minimal-debian13.commands``: the output of ``LISTING`` on the clean walkthrough host, which is that
  system. checks/static/test_commands_checked.py compares the file with the host (``ZR_REGENERATE=1``
  rewrites it), so it cannot go stale.
* ``problems(text)``: one line per program called without such a check (empty when fine). Functions the
  script defines, variable-named commands (``"$tool"``), paths (``./x``, ``$dir/x``) and programs the script
  installs itself and then looks for are not counted.
"""

from __future__ import annotations

import re
from pathlib import Path

from zrunbook import shell

DATA = Path(__file__).with_name("minimal-debian13.commands")
# docker-init is the container engine's, not the system's
LISTING = ("env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -c 'compgen -c' "
           "| grep -vx docker-init | sort -u")
# The words of a guard's line that tell the reader what to do.
ADVICE = re.compile(r"\binstall\b(?! -[dDm])|sqllib|profile|PATH|upgrade|snippet is for|tab\b", re.I)
FUNCTION = re.compile(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)", re.M)
GUARD = re.compile(r"command\s+-v\s+\"?\$?\{?([A-Za-z0-9_.+-]+)\}?\"?")
LOOP = re.compile(r"for\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+([^;\n]+?)\s*;\s*do\b(.*)$", re.M)


def minimal() -> frozenset[str]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def _guards(text: str) -> dict[str, str]:
    """program -> the logical line that looks for it."""
    found: dict[str, str] = {}
    for logical in shell.logical_lines(text):
        line = logical.text
        loop = LOOP.search(line)
        body = line
        if loop is not None:
            var, items, rest = loop.groups()
            # the loop's body may continue on the next lines: the guard is where "command -v $var" stands
            body = rest if GUARD.search(rest) else _following(text, logical.line, var)
            if body is not None:
                for item in items.split():
                    found.setdefault(item.strip("\"'"), body)
                continue
        for name in GUARD.findall(line):
            found.setdefault(name, line)
    return found


def _following(text: str, line_no: int, var: str) -> str | None:
    """The line after line_no (within five) that looks for "$var", if any."""
    lines = text.splitlines()
    for line in lines[line_no:line_no + 5]:
        if re.search(rf"command\s+-v\s+\"?\$\{{?{var}\b", line):
            return line
    return None


def mask(text: str) -> str:
    """The script with what is not a command blanked, newlines kept (so line numbers stay; a command substitution
    inside double quotes is moved out of them, so the parser reads its command): the inside of
    quotes (an awk program, a message; a command substitution inside double quotes stays), arithmetic
    ``(( ))`` and ``$(( ))``, comments, the bodies of here-documents and the patterns of ``case`` items."""
    out: list[str] = []
    stack: list[str] = ["code"]  # code, single, double, arith, comment
    i, n = 0, len(text)
    while i < n:
        ch, state = text[i], stack[-1]
        two = text[i:i + 2]
        if state == "comment":
            if ch == "\n":
                stack.pop()
                out.append(ch)
            else:
                out.append(" ")
            i += 1
        elif state == "single":
            if ch == "'":
                stack.pop()
                out.append(ch)
            else:
                out.append(ch if ch == "\n" else " ")
            i += 1
        elif state in ("arith", "test", "param"):
            end = {"arith": "))", "test": "]]", "param": "}"}[state]
            if text.startswith(end, i):
                stack.pop()
                out.append(" " * len(end))
                i += len(end)
            elif state == "param" and two == "${":
                stack.append("param")
                out.append("  ")
                i += 2
            else:
                out.append(ch if ch == "\n" else " ")
                i += 1
        elif state == "double":
            if ch == "\\":
                out.append("  "[: len(text[i:i + 2])])
                i += 2
            elif ch == '"':
                stack.pop()
                out.append(ch)
                i += 1
            elif two == "$(" and text[i:i + 3] != "$((":
                # close the quote around the substitution, so that its command is read as one
                stack.append("subst")
                out.append('"$(')
                i += 2
            else:
                out.append(ch if ch == "\n" else " ")
                i += 1
        else:  # code, or a command substitution ("subst") inside double quotes
            if ch == "\\":
                out.append(text[i:i + 2])
                i += 2
            elif ch == "'":
                stack.append("single")
                out.append(ch)
                i += 1
            elif ch == '"':
                stack.append("double")
                out.append(ch)
                i += 1
            elif text[i:i + 3] == "$((" or (two == "((" and (i == 0 or text[i - 1] in " \t\n;&|(")):
                stack.append("arith")
                width = 3 if text[i] == "$" else 2
                out.append(" " * width)
                i += width
            elif two == "[[" and (i == 0 or text[i - 1] in " \t\n;&|(!"):
                stack.append("test")
                out.append("  ")
                i += 2
            elif two == "${":
                stack.append("param")
                out.append("  ")
                i += 2
            elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
                stack.append("comment")
                out.append(" ")
                i += 1
            elif ch == ")" and state == "subst":
                stack.pop()
                out.append(')"')
                i += 1
            else:
                out.append(ch)
                i += 1
    masked = "".join(out)
    # here-document bodies: from the line after "<<WORD" (or <<'WORD', <<-WORD) to the line WORD
    lines = masked.split("\n")
    originals = text.split("\n")
    i = 0
    while i < len(lines):
        here = re.search(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)", originals[i])
        if here and "<<<" not in originals[i]:
            end = here.group(1)
            j = i + 1
            while j < len(lines) and originals[j].strip() != end:
                lines[j] = ""
                j += 1
            i = j
        i += 1
    # case items: "pattern)" or "(pattern)" at the start of a line between "case ... in" and "esac"
    depth = 0
    for k, line in enumerate(lines):
        if re.search(r"\bcase\b.*\bin\s*$", line):
            depth += 1
            continue
        if re.match(r"\s*esac\b", line):
            depth = max(0, depth - 1)
            continue
        if depth:
            lines[k] = re.sub(r"^(\s*)\(?[^()\n]*?\)(?=\s|$)", lambda m: m.group(1), line)
    return "\n".join(lines)


def _advised(text: str, name: str, guard: str) -> bool:
    """The guard's line or the three after it say what to do, or a line naming the program does. A guard that
    picks a way (``if command -v X; then ... else ...``, not negated) needs no advice: the other way is taken."""
    if re.match(rf"\s*(?:el)?if\b[^!]*command\s+-v\s+\"?{re.escape(name)}\b", guard):
        return True
    lines = text.splitlines()
    at = next((k for k, line in enumerate(lines) if guard.strip()[:40] in line), None)
    window = lines[at:at + 4] if at is not None else [guard]
    if any(ADVICE.search(line) for line in window):
        return True
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", line) and ADVICE.search(line) for line in lines)


def problems(text: str, known: frozenset[str] | None = None) -> list[str]:
    known = minimal() if known is None else known
    defined = set(FUNCTION.findall(text))
    guards = _guards(text)
    found: list[str] = []
    seen: set[str] = set()
    for cmd in shell.commands(mask(text)):
        name = cmd.words[0]
        if "$" in name or "/" in name or name in known or name in defined or name in seen:
            continue
        # options (after "command -v"), numbers, UPPER_CASE variables, "[[" tests: no programs
        if not re.fullmatch(r"[a-z0-9][A-Za-z0-9_.+-]*", name) or name.isdigit():
            continue
        seen.add(name)
        guard = guards.get(name)
        if guard is None:
            found.append(f"line {cmd.line}: {name} is not on a minimal system and the script calls it without "
                         f"checking first: add `command -v {name} >/dev/null || {{ echo \"{name} is missing: "
                         "install PACKAGE\" >&2; exit 1; }`")
        elif not _advised(text, name, guard):
            found.append(f"line {cmd.line}: the check for {name} does not say how to get it (name the package "
                         f"to install): {guard.strip()}")
    return found


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point."""
    return problems(path.read_text(encoding="utf-8"))
