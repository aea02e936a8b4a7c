"""The labels WebSEAL's certificate step creates and the ones webseald.conf names (token and certificate).

The WebSEAL wrapper (snippets/webseal/token/create-webseal-certificate.sh) exports its settings to the IHS
chapter's certificate script; ``label_problems(wrapper, conf)`` runs that script's reading (``gskit.created``)
with them and compares the token and certificate labels with ``webseal-cert-keyfile-label`` and
``pkcs11-token-label`` in webseald.conf.
"""

from __future__ import annotations

import re
from pathlib import Path

from zrunbook import SNIPPETS
from zrunbook.formats import gskit
from zrunbook.webseal import stanza

IHS_CERT = "ihs/gskit/create-token-certificate.sh"
CONF = "webseal/conf/webseald-pkcs11-current.conf"


def exported_settings(wrapper: str) -> dict[str, str]:
    """The settings a wrapper exports to the IHS chapter's certificate script (its ``export`` line)."""
    exported = re.search(r"^export (.+)$", wrapper, re.M).group(1).split()
    return {k: v for k, v in gskit.defaults(wrapper).items() if k in exported}


def label_problems(wrapper: str, conf: str) -> list[str]:
    ihs = (SNIPPETS / IHS_CERT).read_text(encoding="utf-8")
    made = gskit.created({Path(IHS_CERT).name: ihs}, preset=exported_settings(wrapper))
    entries = stanza.entries(conf)
    token, label = entries[("ssl", "webseal-cert-keyfile-label")][0].split(":")
    problems = []
    for what, created, named in (("token label", made["token"][0], token),
                                 ("token label", made["token"][0], entries[("ssl", "pkcs11-token-label")][0]),
                                 ("certificate label", made["label"][0], label)):
        if created != named:
            problems.append(f"{what}: the certificate step creates {created!r}, webseald.conf names {named!r}")
    return problems


def file_problems(path: Path) -> list[str]:
    """The checker registry's entry point: a certificate wrapper against the runbook's webseald.conf."""
    return label_problems(path.read_text(encoding="utf-8"), (SNIPPETS / CONF).read_text(encoding="utf-8"))
