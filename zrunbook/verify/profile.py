"""The site profile: one TOML file with the values the runbook's snippets take from the environment.

``load(path)`` parses it (tomllib) and validates it against ``profile.schema.json`` (jsonschema, Draft 2020-12);
every problem becomes one line ``FILE:LINE: KEY: what is wrong`` in a ``ProfileError``, the line found by
``line_of`` (tomllib reports a line only for syntax errors). The schema is the one definition of the keys: the
verify page's table of keys is rendered from it, and ``env_file`` renders the bundle's ``site.env`` from a
profile. Secrets are never values: each ``[tokens.NAME]`` table names, in ``user_pin_env``, the environment variable
that holds that token's user PIN, and each server names its token (``token = "NAME"``, overridable per host).
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

SCHEMA_FILE = Path(__file__).with_name("profile.schema.json")
SERVER_KEYS = ("apache", "ihs", "was", "liberty", "webseal")
DEFAULT_CONNECTIONS = 3


class ProfileError(ValueError):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("the site profile is not valid:\n  " + "\n  ".join(problems))


def schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


_HEADER = re.compile(r"^\s*\[\s*([^\]\[]+?)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\"'.-]+)\s*=")


def line_of(text: str, path: tuple) -> int:
    """The line a key path (("servers", "apache", "user")) is written on: its ``key =`` line inside its table,
    else its table's header, else 1. Handles the plain forms a profile uses (tables, dotted headers)."""
    keys = [str(k) for k in path if not isinstance(k, int)]
    table: list[str] = []
    best, depth = 1, 0
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            table = [part.strip().strip("\"'") for part in header.group(1).split(".")]
            if table == keys[: len(table)] and len(table) > depth:
                best, depth = number, len(table)
            continue
        key = _KEY.match(line)
        if key:
            full = table + [part.strip("\"'") for part in key.group(1).split(".")]
            if full == keys:
                return number
            if full == keys[: len(full)] and len(full) > depth:
                best, depth = number, len(full)  # an inline table or array holding the key
    return best


def _problems(text: str, data: dict, where: str) -> list[str]:
    import jsonschema  # here, not at the top: the guide's build reads the steps without this package

    validator = jsonschema.Draft202012Validator(schema())
    out = []
    if "token" in data and "tokens" not in data:  # the profile's form before tokens per service
        return [f"{where}:{line_of(text, ('token',))}: token: the profile names its tokens per service now: a table "
                "[tokens.NAME] each (label, user_pin_env) and token = \"NAME\" in each server table"]
    for error in sorted(validator.iter_errors(data), key=lambda e: (line_of(text, tuple(e.absolute_path)), e.message)):
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":
            extra = re.findall(r"'([^']+)'", error.message)
            for name in extra:
                key = ".".join(map(str, (*path, name)))
                out.append(f"{where}:{line_of(text, (*path, name))}: {key}: not a key of the site profile "
                           f"(the keys are in zrunbook/verify/profile.schema.json)")
            continue
        key = ".".join(map(str, path)) or "(top level)"
        message = error.message
        if error.validator == "required":
            missing = re.findall(r"'([^']+)'", message)[:1]
            key = ".".join(map(str, (*path, *missing)))
            message = "missing (required)"
        elif error.validator == "pattern" and error.schema.get("description"):
            message = f"{error.instance!r} does not have the form of {error.schema['description']}"
        elif error.validator == "type":
            message = f"must be {error.validator_value}, not {type(error.instance).__name__} {error.instance!r}"
        out.append(f"{where}:{line_of(text, path)}: {key}: {message}")
    return out


def _references(text: str, data: dict, where: str) -> list[str]:
    """What the schema cannot say: each server's token names a [tokens.NAME] table."""
    out = []
    for name, server in data.get("servers", {}).items():
        if server["token"] not in data["tokens"]:
            out.append(f"{where}:{line_of(text, ('servers', name, 'token'))}: servers.{name}.token: "
                       f"{server['token']!r} names no [tokens.{server['token']}] table (the profile has "
                       f"{', '.join(sorted(data['tokens']))})")
    return out


@dataclass(frozen=True)
class Token:
    name: str  # the NAME of [tokens.NAME]
    label: str  # as pkcsconf -t shows it
    pin_env: str  # the environment variable with its user PIN


@dataclass(frozen=True)
class Profile:
    data: dict
    path: Path | None = None

    @property
    def name(self) -> str:
        return self.data["site"]["name"]

    @property
    def guide_url(self) -> str | None:
        return self.data["site"].get("guide_url")

    @property
    def tokens(self) -> dict[str, dict]:
        """The [tokens.NAME] tables: NAME -> {"label": ..., "user_pin_env": ...}."""
        return self.data["tokens"]

    def token(self, name: str) -> Token | None:
        table = self.tokens.get(name)
        return Token(name, table["label"], table["user_pin_env"]) if table else None

    def server(self, name: str) -> dict | None:
        return self.data.get("servers", {}).get(name)

    def groups(self, part: str) -> list[str]:
        """The inventory groups of a server ("apache") or of "crypto"."""
        table = self.data.get("crypto") if part == "crypto" else self.server(part)
        return list(table["groups"]) if table else []


def loads(text: str, where: str = "<profile>") -> Profile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ProfileError([f"{where}:{m.group(1) if m else 1}: not TOML: {exc}"]) from None
    problems = _problems(text, data, where) or _references(text, data, where)
    if problems:
        raise ProfileError(problems)
    return Profile(data)


def load(path: Path | str) -> Profile:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError([f"{path}: cannot read the site profile: {exc.strerror}"]) from None
    profile = loads(text, str(path))
    return Profile(profile.data, path)


def env_file(profile: Profile) -> str:
    """The profile as shell assignments for the bundle's site.env: what a deployer sources before running the
    snippets, the same values verify checks. The PIN is not in it: the file says where it comes from."""
    lines = [f"# zrunbook site profile {profile.name!r}, rendered by `make bundle PROFILE=...`; source it before",
             "# the snippets. Secrets are not in this file: export them yourself (read -rs NAME; export NAME).",
             "# TOKEN_USER_PIN is not in this file: read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN"]
    for name in SERVER_KEYS:
        server = profile.server(name)
        if not server:
            continue
        prefix = name.upper()
        token = profile.token(server["token"])
        lines += [f"# {name}: inventory groups {', '.join(server['groups'])}; its token's user PIN: make verify "
                  f"reads it from {token.pin_env}",
                  f"export {prefix}_TOKEN_LABEL={shlex.quote(token.label)}",
                  f"export {prefix}_ENDPOINT={shlex.quote(server['endpoint'])}",
                  f"export {prefix}_SERVICE_USER={shlex.quote(server['user'])}",
                  f"export {prefix}_CA_FILE={shlex.quote(server['ca_file'])}"]
    crypto = profile.data.get("crypto")
    if crypto and "ap_wait_seconds" in crypto:
        lines.append(f"export AP_WAIT_SECONDS={crypto['ap_wait_seconds']}")
    return "\n".join(lines) + "\n"


def file_problems(path: Path) -> list[str]:
    """The site-profile checker (zrunbook/checkers.toml): the problems ``load`` finds, [] when the file is valid."""
    try:
        load(path)
    except ProfileError as exc:
        return exc.problems
    return []
