"""Validator for the GSKit snippets (gskcapicmd, gskcmd, sslstash) and their consistency with httpd.conf.

GSKit cannot be installed on the runbook's hosts, so the shell snippets that call it are read, not run:

* ``validate(text)`` finds every gskcapicmd / gskcmd / sslstash command (read by zrunbook/shell.py,
  pipes and ``;`` split off), expands the snippet's own ``NAME="${NAME:-default}"`` assignments, and
  checks the command against facts/ihs/gskit-commands.csv: the object and action exist, each
  option is allowed there, options that take a value have one (the study's line break after
  ``-label`` is caught here), enumerated values are allowed, required options are present, and a
  password or PIN is a variable the reader sets in the environment, never a literal.
* ``consistency(scripts, conf, preset=...)`` compares what the scripts create with what httpd.conf names:
  token label and certificate label (SSLServerCert token:label), the certificate's CN and ServerName,
  the PKCS#11 library (-crypto, SSLPKCSDriver), the key database (KeyFile) and the stash file
  (SSLStashfile). ``preset`` is the environment the scripts run with on one distribution.
* ``library_candidates(text)``: a script that looks for openCryptoki's library names the RHEL/SLES and
  the Ubuntu/Debian path in ``RHEL_SLES_LIB=`` and ``UBUNTU_DEBIAN_LIB=`` lines; this returns them per
  distribution, ``$(uname -m)`` read as IBM Z's ``s390x``.
Both return a list of problems (empty when the files are fine), each naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import SNIPPETS, shell
from zrunbook import facts as facts_tables

FACTS = FACTS_ROOT / "ihs" / "gskit-commands.csv"
TOOLS = ("gskcapicmd", "gskcmd", "sslstash")
# GSKit's own program names for the command line IHS wraps as bin/gskcapicmd (WebSEAL calls them directly).
ALIASES = {"gsk8capicmd_64": "gskcapicmd", "gsk8capicmd": "gskcapicmd"}
ASSIGN = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)=(?:"\$\{\1:-(?P<default>[^}]*)\}"|(?P<plain>"[^"$]*"|[^\s$"]+))\s*$')
VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Command:
    line: int
    tool: str
    raw: list[str]  # tokens as written (quotes removed, variables not expanded)
    args: list[str]  # tokens after the tool, expanded
    options: dict[str, str | None] = field(default_factory=dict)


def load_facts(path: Path = FACTS) -> dict[tuple[str, str, str], dict[str, dict[str, str]]]:
    facts: dict[tuple[str, str, str], dict[str, dict[str, str]]] = {}
    for row in facts_tables.load(path):
        facts.setdefault((row["tool"], row["object"], row["action"]), {})[row["option"]] = row
    return facts


def defaults(text: str, preset: dict[str, str] | None = None) -> dict[str, str]:
    """The snippet's own variable values: NAME="${NAME:-default}" and NAME=value assignments.

    ``preset`` is the environment a caller runs the snippet with (another snippet's exported
    settings): it wins over a ``${NAME:-default}``, as in the shell, but not over a plain assignment.
    """
    env: dict[str, str] = dict(preset or {})
    for line in text.splitlines():
        m = ASSIGN.match(line)
        if m:
            if m.group("default") is not None:
                if m.group(1) not in (preset or {}):
                    env[m.group(1)] = expand(m.group("default"), env)
            else:
                env[m.group(1)] = expand(m.group("plain").strip('"'), env)
    return env


def expand(word: str, env: dict[str, str]) -> str:
    """Expand $VAR, ${VAR} and ${VAR:-x}; a variable only the environment sets becomes <VAR>."""
    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(3)
        if name in env:
            return env[name]
        return expand(m.group(2), env) if m.group(2) is not None else f"<{name}>"
    return VAR.sub(sub, word)


def commands(text: str, preset: dict[str, str] | None = None) -> list[Command]:
    env = defaults(text, preset)
    found: list[Command] = []
    for cmd in shell.commands(text):
        name = expand(cmd.words[0], env).rsplit("/", 1)[-1]
        name = ALIASES.get(name, name)
        if name in TOOLS:
            found.append(Command(cmd.line, name, list(cmd.words), [expand(t, env) for t in cmd.args]))
    return found


def _is_env_secret(raw: str, env: dict[str, str]) -> bool:
    m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", raw)
    return bool(m) and m.group(1) not in env


def _check_value(kind: str, value: str) -> str | None:
    if "<" in value:  # set by the reader at run time
        return None
    if kind == "int" and not value.isdigit():
        return f"is not a number: {value}"
    if kind == "dn" and not re.search(r"(^|,)\s*CN=[^,]+", value, re.I):
        return f"has no CN=: {value}"
    if "|" in kind or kind in ("crypto",):
        allowed = kind.split("|")
        if value not in allowed:
            return f"is {value}, not one of {', '.join(allowed)}"
    return None


def validate(text: str, facts=None, preset: dict[str, str] | None = None) -> list[str]:
    facts = facts or load_facts()
    env = defaults(text, preset)
    problems: list[str] = []
    for cmd in commands(text, preset):
        where = f"line {cmd.line}: {cmd.tool}"
        if cmd.tool == "sslstash":
            problems += [f"{where}: {p}" for p in _validate_sslstash(cmd, facts, env)]
            continue
        if len(cmd.args) < 2:
            problems.append(f"{where}: needs an object and an action (e.g. -cert -create)")
            continue
        obj, action = cmd.args[0], cmd.args[1]
        allowed = facts.get((cmd.tool, obj, action))
        if allowed is None:
            problems.append(f"{where}: {obj} {action} is not a known object and action")
            continue
        i, seen = 2, {}
        while i < len(cmd.args):
            opt = cmd.args[i]
            row = allowed.get(opt)
            if row is None:
                problems.append(f"{where} {obj} {action}: unknown option {opt}")
                i += 1
                continue
            if opt in seen:
                problems.append(f"{where} {obj} {action}: {opt} given twice")
            if row["value"] == "flag":
                seen[opt] = None
                i += 1
                continue
            if i + 1 >= len(cmd.args) or cmd.args[i + 1].startswith("-"):
                problems.append(f"{where} {obj} {action}: option {opt} needs a value")
                seen[opt] = None
                i += 1
                continue
            value, raw_value = cmd.args[i + 1], cmd.raw[i + 2]
            seen[opt] = value
            if row["value"] == "secret" and not _is_env_secret(raw_value, env):
                problems.append(f"{where} {obj} {action}: {opt} must come from an environment variable, "
                                f"not {raw_value!r}")
            elif (err := _check_value(row["value"], value)) is not None:
                problems.append(f"{where} {obj} {action}: {opt} {err}")
            i += 2
        for opt, row in allowed.items():
            if row["required"] == "yes" and opt not in seen:
                problems.append(f"{where} {obj} {action}: {opt} is required")
        stores = [o for o, r in allowed.items() if r["required"] == "store"]
        if stores and not any(o in seen for o in stores):
            problems.append(f"{where} {obj} {action}: name a key store with {' or '.join(stores)}")
        cmd.options = seen
    return problems


def _validate_sslstash(cmd: Command, facts, env) -> list[str]:
    rows = facts.get(("sslstash", "", ""), {})
    args, raw = list(cmd.args), list(cmd.raw[1:])
    if args and args[0] == "-c":
        args, raw = args[1:], raw[1:]
    names = [o for o in rows if o.startswith("<")]
    if len(args) != len(names):
        return [f"takes [-c] {' '.join(names)}; got {len(args)} arguments"]
    problems = []
    for name, value, raw_value in zip(names, args, raw, strict=True):
        kind = rows[name]["value"]
        if kind == "secret":
            if not _is_env_secret(raw_value, env):
                problems.append(f"{name} must come from an environment variable, not {raw_value!r}")
        elif (err := _check_value(kind, value)) is not None:
            problems.append(f"{name} {err}")
    return problems


# --- consistency with httpd.conf -------------------------------------------------------------------


def conf_values(conf: str) -> dict[str, tuple[int, str]]:
    """The directives the GSKit steps must agree with (first occurrence), with their line numbers."""
    wanted = {"ServerName", "SSLServerCert", "SSLPKCSDriver", "KeyFile", "SSLStashfile"}
    found: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(conf.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] in wanted and words[0] not in found:
            found[words[0]] = (number, words[-1])
    return found


def created(scripts: dict[str, str], preset: dict[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """What the scripts create or name (run with the environment ``preset``): key -> (value, 'file line N')."""
    out: dict[str, tuple[str, str]] = {}
    for name, text in scripts.items():
        for cmd in commands(text, preset):
            where = f"{name} line {cmd.line}"
            if cmd.tool == "sslstash":
                positional = [a for a in cmd.args if a != "-c"]
                if positional:
                    out.setdefault("stash", (positional[0], where))
                continue
            opts = _options(cmd)
            if cmd.args[:2] == ["-keydb", "-create"] and "-db" in opts:
                out.setdefault("kdb", (opts["-db"], where))
            if cmd.args[:2] == ["-cert", "-create"]:
                for key, opt in (("token", "-tokenlabel"), ("label", "-label"), ("crypto", "-crypto")):
                    if opts.get(opt):
                        out[key] = (opts[opt], where)
                cn = re.search(r"(?:^|,)\s*CN=([^,]+)", opts.get("-dn") or "", re.I)
                if cn:
                    out["cn"] = (cn.group(1).strip(), where)
    return out


def _options(cmd: Command) -> dict[str, str | None]:
    opts: dict[str, str | None] = {}
    args = cmd.args[2:]
    i = 0
    while i < len(args):
        if args[i].startswith("-"):
            has_value = i + 1 < len(args) and not args[i + 1].startswith("-")
            opts[args[i]] = args[i + 1] if has_value else None
            i += 2 if has_value else 1
        else:
            i += 1
    return opts


LIBRARY_VARIABLES = {"rhel-sles": "RHEL_SLES_LIB", "ubuntu-debian": "UBUNTU_DEBIAN_LIB"}


def library_candidates(text: str) -> dict[str, str]:
    """{distribution: library path} from a script's RHEL_SLES_LIB= and UBUNTU_DEBIAN_LIB= lines (IBM Z)."""
    found = {}
    for distro, name in LIBRARY_VARIABLES.items():
        m = re.search(rf'^\s*{name}=("?)(.+?)\1\s*$', text, re.M)
        if m:
            found[distro] = m.group(2).replace("$(uname -m)", "s390x")
    return found


def consistency(scripts: dict[str, str], conf: str, conf_name: str = "httpd.conf",
                preset: dict[str, str] | None = None) -> list[str]:
    made = created(scripts, preset)
    named = conf_values(conf)
    problems: list[str] = []

    def compare(key: str, directive: str, conf_value: str | None, what: str) -> None:
        if key not in made or conf_value is None:
            return
        value, where = made[key]
        if value != conf_value:
            line = named[directive][0]
            problems.append(f"{what}: {where} creates {value!r} but {conf_name} line {line} "
                            f"({directive}) names {conf_value!r}")

    cert = named.get("SSLServerCert", (0, None))[1]
    token, _, label = cert.rpartition(":") if cert else (None, None, None)
    if cert is not None and not token:
        problems.append(f"{conf_name} line {named['SSLServerCert'][0]}: SSLServerCert {cert} names no token")
    compare("token", "SSLServerCert", token or None, "token label")
    compare("label", "SSLServerCert", label, "certificate label")
    compare("cn", "ServerName", named.get("ServerName", (0, None))[1], "certificate CN and ServerName")
    compare("crypto", "SSLPKCSDriver", named.get("SSLPKCSDriver", (0, None))[1], "PKCS#11 library")
    compare("kdb", "KeyFile", named.get("KeyFile", (0, None))[1], "key database")
    compare("stash", "SSLStashfile", named.get("SSLStashfile", (0, None))[1], "stash file")
    return problems


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: ``validate``, and a GSKit snippet must call GSKit."""
    text = path.read_text(encoding="utf-8")
    return validate(text) if commands(text) else [f"{path.name} calls no GSKit command"]


def study_set() -> tuple[dict[str, str], str]:
    """The 2013 study's GSKit steps (name -> text) and the httpd.conf they serve, as corrected in the runbook."""
    snippets = SNIPPETS / "ihs"
    scripts = {p.name: p.read_text(encoding="utf-8") for p in sorted((snippets / "gskit").glob("*-2013.sh"))}
    scripts["stash-token-pin.sh"] = (snippets / "gskit/stash-token-pin.sh").read_text(encoding="utf-8")
    return scripts, (snippets / "httpd/httpd-ssl-2013.conf").read_text(encoding="utf-8")


def study_consistency_problems(path: Path) -> list[str]:
    """The checker registry's entry point for the 2013 set: the file in place of its twin in that set (a script
    named like one of the steps replaces it, another script replaces the certificate step, a .conf replaces
    httpd.conf), then ``consistency``."""
    scripts, conf = study_set()
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".sh":
        if path.name not in scripts:
            scripts.pop("create-token-certificate-2013.sh")
        scripts[path.name] = text
    else:
        conf = text
    return consistency(scripts, conf)
