"""Numbers the crypto pages state, computed from the recorded outputs they describe (never typed twice)."""

from __future__ import annotations

from zrunbook import SNIPPETS
from zrunbook import facts as facts_tables
from zrunbook.crypto import recorded

LSZCRYPT = "crypto/adapters/lszcrypt-VV-2013-study.out"
ICASTATS = "crypto/cpacf/icastats-2013-study.out"
CEX_MODES = "crypto/cex-modes"
DEPENDS_ON = [f"snippets/{LSZCRYPT}", f"snippets/{ICASTATS}", f"facts/{CEX_MODES}.csv",
              "facts/crypto/openssl-routes.csv"]


def _cards() -> list[dict]:
    return recorded.parse_lszcrypt_2013((SNIPPETS / LSZCRYPT).read_text(encoding="utf-8"))


def _icastats() -> dict[str, tuple[int, int]]:
    return recorded.parse_icastats((SNIPPETS / ICASTATS).read_text(encoding="utf-8"))


def study_online_card() -> str:
    online = [c for c in _cards() if c["status"] == "online"]
    return ", ".join(f"card{c['card']} ({c['type']})" for c in online)


def study_online_card_requests() -> str:
    return str(sum(c["requests"] for c in _cards() if c["status"] == "online"))


def study_rsa_requests() -> str:
    stats = _icastats()
    return str(stats["MOD EXPO"][0] + stats["RSA CRT"][0])


def study_rsa_crt() -> str:
    return str(_icastats()["RSA CRT"][0])


def study_mod_expo() -> str:
    return str(_icastats()["MOD EXPO"][0])


def study_aes_hardware() -> str:
    stats = _icastats()
    return str(stats["AES ENC"][0] + stats["AES DEC"][0])


def study_random_software() -> str:
    return str(_icastats()["RANDOM"][1])


def _modes_by_clear_key_rsa(serves: bool) -> str:
    """The adapter modes that do (or do not) serve clear-key RSA, as facts/crypto/cex-modes.csv says."""
    modes = [r["mode"] for r in facts_tables.table(CEX_MODES)
             if r["clear-key RSA"].startswith("yes") == serves]
    if not modes:
        raise ValueError(f"no adapter mode in {CEX_MODES} has clear-key RSA {'yes' if serves else 'no'}")
    return " and ".join(f"{m}s" for m in modes)


def clear_key_rsa_modes() -> str:
    return _modes_by_clear_key_rsa(True)


def no_clear_key_rsa_modes() -> str:
    return _modes_by_clear_key_rsa(False)


def openssl_route_rule() -> str:
    """The rule the libraries page states, from facts/crypto/openssl-routes.csv (newest release first)."""
    from zrunbook.crypto import routes

    rows = list(reversed(routes.routes()))
    return "; ".join(f"{row['OpenSSL']}: {row['route to Crypto Express']}" for row in rows)
