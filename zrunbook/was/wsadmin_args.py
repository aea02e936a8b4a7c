# ruff: noqa: UP004, UP031 - the wsadmin fake (checks/standins/was/wsadmin_fake.py) runs it under Jython 2.7.
"""How wsadmin parses AdminTask arguments: ``parse_task_args(text)``, and the ``WsadminError`` it raises.

The tls-as-written checker (zrunbook/static/tls_as_written.py) reads the wsadmin snippets' AdminTask arguments with
it, and the checks' recording fake of wsadmin (checks/standins/was/wsadmin_fake.py) parses every call with it, under
Jython 2.7 in a container (the check copies this file beside the fake): so it is written in Python 2.7's idiom.
"""


class WsadminError(Exception):
    pass


def parse_task_args(text):
    """'[-a b -c "d e" -f [x y]]' or a list -> [(name, value)], as wsadmin parses AdminTask arguments."""
    if isinstance(text, (list, tuple)):
        tokens = list(text)
    else:
        s = text.strip()
        if s.startswith("[") and s.endswith("]"):
            s = s[1:-1]
        tokens, i = [], 0
        while i < len(s):
            c = s[i]
            if c.isspace():
                i += 1
            elif c == '"':
                j = s.index('"', i + 1)
                tokens.append(s[i + 1:j])
                i = j + 1
            elif c == "[":
                depth, j = 0, i
                while True:
                    if s[j] == "[":
                        depth += 1
                    elif s[j] == "]":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                tokens.append(s[i:j + 1])
                i = j + 1
            else:
                j = i
                while j < len(s) and not s[j].isspace():
                    j += 1
                tokens.append(s[i:j])
                i = j
    pairs, i = [], 0
    while i < len(tokens):
        name = tokens[i]
        if not name.startswith("-"):
            raise WsadminError("expected a -parameter, found %r" % name)
        if i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
            pairs.append((name[1:], tokens[i + 1]))
            i += 2
        else:
            pairs.append((name[1:], ""))
            i += 1
    return pairs
