"""Values the WebSEAL pages state, read from the snippets so that a page never types them twice."""

from pathlib import Path

from zrunbook.webseal import stanza

ROOT = Path(__file__).resolve().parents[2]
CONF = "snippets/webseal/conf/webseald-pkcs11-current.conf"
DEPENDS_ON = [CONF]


def _conf() -> dict:
    return stanza.entries((ROOT / CONF).read_text(encoding="utf-8"))


def token_label() -> str:
    return _conf()[("ssl", "pkcs11-token-label")][0]


def cert_label() -> str:
    return _conf()[("ssl", "webseal-cert-keyfile-label")][0].split(":", 1)[1]


def keyfile_label() -> str:
    return _conf()[("ssl", "webseal-cert-keyfile-label")][0]


def webseal_user() -> str:
    return _conf()[("server", "unix-user")][0]

