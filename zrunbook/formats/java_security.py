"""Checker ``java-security``: a java.security provider-list fragment, parsed as Java properties.

Rules (IBM SDK security guide, "Registering the Cryptographic Service Provider Statically"; the 2013 study's
notes on IBMPKCS11Impl): keys ``security.provider.N`` numbered 1, 2, 3 ... without gaps or repeats; each value a
fully qualified class name, optionally followed by ONE argument on the same logical line; the PKCS#11 provider's
argument an absolute configuration path. A path on a line of its own parses as a key with an empty value, which
Java then ignores: reported as such.

Where the PKCS#11 provider stands depends on what the list is for:
- the current list (``study=False``): after IBMJCEPlus. IBM SDK 8's TLS 1.3 needs IBMJCEPlus (IBM's JSSE page
  "Matching the behavior of SSLContext.getInstance"), and a PKCS#11 provider asked first also takes the
  handshake's AES-GCM, HMAC and hashes: the runbook's stand-in (SunPKCS11 on openCryptoki) then failed every
  handshake with "bad record mac" (checks/was/test_verify_tls.py). A key generated in the token is used by the
  token's provider wherever it stands, because no software provider can use a sensitive token key.
- the study's list (``study=True``, files named *2013*): first, as the study had it; its PKCS#12 key could
  only reach the token through the provider asked first.
"""

from __future__ import annotations

import re
from pathlib import Path

import javaproperties

PROVIDER_KEY = re.compile(r"^security\.provider\.(\d+)$")
CLASS = re.compile(r"^[a-zA-Z_$][\w$]*(\.[a-zA-Z_$][\w$]*)+$")
PKCS11 = ("com.ibm.crypto.pkcs11impl.provider.IBMPKCS11Impl", "sun.security.pkcs11.SunPKCS11")
JCEPLUS = "com.ibm.crypto.plus.provider.IBMJCEPlus"


def pkcs11_config_path(text: str) -> str | None:
    """The configuration path given to the PKCS#11 provider, if any."""
    for key, value in javaproperties.loads(text).items():
        words = value.split()
        if PROVIDER_KEY.match(key) and len(words) == 2 and words[0] in PKCS11:
            return words[1]
    return None


def problems(text: str, study: bool = False) -> list[str]:
    found = []
    entries = [(e.key, e.value) for e in javaproperties.parse(text) if isinstance(e, javaproperties.KeyValue)]
    numbers = []
    for key, value in entries:
        m = PROVIDER_KEY.match(key)
        if not m:
            if key.startswith("/") or CLASS.match(key):
                found.append(f"'{key}' stands on a line of its own and is read as a key with no value: "
                             "the class and its configuration path must be on one line")
            continue
        numbers.append(int(m.group(1)))
        words = value.split()
        if not words or not CLASS.match(words[0]):
            found.append(f"{key}: '{value}' is not a provider class name")
        elif len(words) > 2:
            found.append(f"{key}: more than one argument after {words[0]}")
        if words and words[0] in PKCS11:
            if study and m.group(1) != "1":
                found.append(f"{key}: the PKCS#11 provider must be security.provider.1 to be asked first")
            plus = [int(PROVIDER_KEY.match(k).group(1)) for k, v in entries
                    if PROVIDER_KEY.match(k) and v.split()[:1] == [JCEPLUS]]
            if not study and not plus:
                found.append("no IBMJCEPlus in the list: IBM SDK 8 needs it for TLS 1.3")
            if not study and plus and int(m.group(1)) < plus[0]:
                found.append(f"{key}: the PKCS#11 provider stands ahead of IBMJCEPlus (security.provider.{plus[0]}), "
                             "so it would also take the handshake's ciphers and hashes; list it after IBMJCEPlus")
            if len(words) != 2 or not words[1].startswith("/"):
                found.append(f"{key}: {words[0]} needs the absolute path of its configuration file on the same line")
    repeated = sorted({n for n in numbers if numbers.count(n) > 1})
    if repeated:
        found.append(f"security.provider numbers used twice: {repeated} (the later line wins, the earlier is lost)")
    if sorted(set(numbers)) != list(range(1, len(set(numbers)) + 1)):
        found.append(f"security.provider numbers are not 1..n without gaps: {sorted(set(numbers))} "
                     "(Java stops reading at the first missing number)")
    if not any(v.split()[:1] and v.split()[0] in PKCS11 for _k, v in entries):
        found.append("no PKCS#11 provider (IBMPKCS11Impl) in the list")
    return found


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: a file named *2013* is the study's list (PKCS#11 first)."""
    return problems(path.read_text(encoding="utf-8"), study="2013" in path.name)
