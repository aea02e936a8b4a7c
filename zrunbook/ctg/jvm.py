"""The Gateway daemon's JVM options and its java.security provider list (z/OS hardware crypto).

``stdenv_problems(text)``: a STDENV fragment ``CTGSTART_OPTS=...``; every JVM option must carry ctgstart's
``-j`` prefix (https://www.ibm.com/docs/en/SSZHFX_9.1.0/configuring/topics/set_jvm_options.html) and be in
facts/ctg/jvm-options.csv; ``ibm_specific(text)`` lists the options that only IBM's J9/OpenJ9 JVM
knows, for the page's note.

``java_security_problems(text)``: the WAS chapter's java.security checker (numbering, one line per provider,
class names) minus its PKCS#11 rule, plus the z/OS rule: IBMJCECCA is the first JCE provider and a software
JCE provider follows it for the algorithms IBMJCECCA does not implement.
"""

from __future__ import annotations

import re
from pathlib import Path

import javaproperties

from zrunbook import FACTS as FACTS_ROOT
from zrunbook import facts as facts_tables
from zrunbook.formats import java_security

FACTS = FACTS_ROOT / "ctg" / "jvm-options.csv"
CCA = "com.ibm.crypto.hdwrCCA.provider.IBMJCECCA"
JSSE = ("com.ibm.jsse2.IBMJSSEProvider2",)
SOFTWARE_JCE = ("com.ibm.crypto.provider.IBMJCE", "com.ibm.crypto.plus.provider.IBMJCEPlus",
                "com.ibm.crypto.plus.provider.OpenJCEPlus")


def _options() -> dict[str, dict[str, str]]:
    return {r["option"]: r for r in facts_tables.load(FACTS)}


def _jvm_args(text: str) -> tuple[list[str], list[str]]:
    args, problems = [], []
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, _, value = line.partition("=")
        if name != "CTGSTART_OPTS":
            problems.append(f"line {no}: only CTGSTART_OPTS is checked here, not {name!r}")
            continue
        for word in value.split():
            if not word.startswith("-j"):
                problems.append(f"line {no}: {word!r} lacks ctgstart's -j prefix, "
                                "so ctgstart reads it as its own option")
                continue
            args.append(word[2:])
    return args, problems


def _known(arg: str, facts) -> dict[str, str] | None:
    return next((facts[o] for o in sorted(facts, key=len, reverse=True) if arg == o or
                 (arg.startswith(o) and re.fullmatch(r"\d+[KMGkmg]?", arg[len(o):]))), None)


def stdenv_problems(text: str) -> list[str]:
    facts = _options()
    args, problems = _jvm_args(text)
    problems += [f"JVM option {a!r} is not in the table of options this runbook uses" for a in args
                 if _known(a, facts) is None]
    return problems


def ibm_specific(text: str) -> list[str]:
    facts = _options()
    return [a for a in _jvm_args(text)[0] if (f := _known(a, facts)) and f["jvm"].startswith("IBM")]


def java_security_problems(text: str) -> list[str]:
    problems = [p for p in java_security.problems(text) if "no PKCS#11 provider" not in p]
    providers = {int(k.rsplit(".", 1)[1]): v.split()[0] for k, v in javaproperties.loads(text).items()
                 if java_security.PROVIDER_KEY.match(k) and v.split()}
    order = [providers[n] for n in sorted(providers)]
    jce = [c for c in order if c == CCA or c in SOFTWARE_JCE]
    if CCA not in order:
        problems.append("IBMJCECCA is not in the list: Java does not use the Crypto Express adapters through ICSF")
    elif jce[0] != CCA:
        problems.append(f"{jce[0].rsplit('.', 1)[1]} comes before IBMJCECCA: Java asks the first JCE provider, so "
                        "the hardware provider is not used")
    elif not any(c in SOFTWARE_JCE for c in order[order.index(CCA) + 1:]):
        problems.append("no software JCE provider (IBMJCE) after IBMJCECCA: algorithms IBMJCECCA does not implement "
                        "fail instead of falling back")
    if not any(c in JSSE for c in order):
        problems.append("no IBMJSSEProvider2: the Gateway's SSL handler has no JSSE provider")
    return problems


def java_security_file_problems(path: Path) -> list[str]:
    """The checker registry's entry point for the z/OS java.security provider list."""
    return java_security_problems(path.read_text(encoding="utf-8"))


def stdenv_file_problems(path: Path) -> list[str]:
    """The checker registry's entry point for the STDENV JVM options."""
    return stdenv_problems(path.read_text(encoding="utf-8"))
