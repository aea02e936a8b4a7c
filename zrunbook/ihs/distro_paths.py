"""openCryptoki's library per distribution, as the IHS chapter's snippets name it, and on a container host.

Configuration files cannot look for the library, so where its path differs the chapter ships one file
per distribution (``rhel-sles``, ``ubuntu-debian``): the IHS fragment with the SSLPKCSDriver line
(snippets/ihs/httpd/pkcs11-driver-<distro>.conf) and the OpenSSL configuration for pkcs11-provider
(snippets/ihs/apache/openssl-pkcs11-provider-<distro>.conf). The shell snippets look for it themselves.

* ``library(distro)`` is the path the IHS fragment names: the tests read it from there, never type it.
* ``on_host(host, text)``: the Ubuntu/Debian files name IBM Z's multiarch triplet (``s390x-linux-gnu``).
  On the s390x host they are used byte for byte; on the amd64 host that triplet is replaced by the host's
  own (``x86_64-linux-gnu``), the only change a test makes to them.
"""

from __future__ import annotations

import re
from pathlib import Path

from zrunbook import SNIPPETS

DISTROS = ("rhel-sles", "ubuntu-debian")
IBM_Z_TRIPLET = "s390x-linux-gnu"
DRIVER_SNIPPET = "ihs/httpd/pkcs11-driver-{}.conf"
OPENSSL_SNIPPET = "ihs/apache/openssl-pkcs11-provider-{}.conf"


def driver_fragment(distro: str) -> str:
    return (SNIPPETS / DRIVER_SNIPPET.format(distro)).read_text(encoding="utf-8")


def openssl_config(distro: str) -> str:
    return (SNIPPETS / OPENSSL_SNIPPET.format(distro)).read_text(encoding="utf-8")


def _value(pattern: str, text: str) -> str:
    found = re.findall(pattern, text, re.M)
    assert len(found) == 1, f"expected one match of {pattern!r}, found {found}"
    return found[0]


def library(distro: str) -> str:
    """The library the distribution's IHS fragment names (SSLPKCSDriver)."""
    return _value(r"^SSLPKCSDriver\s+(\S+)\s*$", driver_fragment(distro))


def module_path(openssl_text: str) -> str:
    """pkcs11-module-path of an OpenSSL configuration for pkcs11-provider."""
    return _value(r"^\s*pkcs11-module-path\s*=\s*(\S+)\s*$", openssl_text)


def triplet(host) -> str:
    """The host's multiarch triplet, formed as the shell snippets form it: $(uname -m)-linux-gnu."""
    return host.check_output("uname -m").strip() + "-linux-gnu"


def on_host(host, text: str) -> str:
    return text.replace(IBM_Z_TRIPLET, triplet(host))


CURRENT_CONF = "ihs/httpd/httpd-ssl-current.conf"
INCLUDE = re.compile(r"^Include\s+(\S+)\s*$", re.M)


def current_conf() -> str:
    return (SNIPPETS / CURRENT_CONF).read_text(encoding="utf-8")


def included(conf_text: str) -> str:
    """The one file an IHS configuration includes, relative to ServerRoot (conf/pkcs11-driver.conf)."""
    return _value(INCLUDE.pattern, conf_text)


def current_with_driver(distro: str, fragment: str | None = None) -> str:
    """httpd-ssl-current.conf as IHS reads it on the distribution: the Include line replaced by the fragment."""
    text = current_conf()
    return INCLUDE.sub(lambda _: (fragment or driver_fragment(distro)).rstrip("\n"), text)


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: a file that names openCryptoki's library names the one the
    distribution's IHS fragment names; a script that looks for it looks for exactly each distribution's."""
    from zrunbook.formats import gskit
    text = path.read_text(encoding="utf-8")
    wanted = {d: library(d) for d in DISTROS}
    if path.suffix == ".sh":
        found = gskit.library_candidates(text)
        return [] if found == wanted else [f"{path.name} looks for {found}, the IHS fragments name {wanted}"]
    distro = next((d for d in DISTROS if path.stem.endswith(d)), None)
    if distro is None:
        return [f"{path.name}: no distribution ({', '.join(DISTROS)}) at the end of its name"]
    try:
        named = module_path(text) if "openssl" in path.name else _value(r"^SSLPKCSDriver\s+(\S+)\s*$", text)
    except AssertionError as exc:
        return [f"{path.name}: {exc}"]
    if named != wanted[distro]:
        return [f"{path.name} names {named!r}, the {distro} IHS fragment {wanted[distro]!r}"]
    return []
