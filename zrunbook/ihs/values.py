"""Values the IHS chapter's pages and the post-quantum page state (the ``{value}`` role, e.g.
``{value}`ihs:gskit_level```), read from the snippets, the facts and the pinned CLI driver."""

from __future__ import annotations

from zrunbook.ihs import tls_groups as tg

DEPENDS_ON = ([f"snippets/{s}" for s in (*tg.SITES, tg.BEFORE_3_5)]
              + ["facts/crypto/openssl-versions.csv", "zrunbook/clidriver.py"])


def gskit_level() -> str:
    """The GSKit level the IHS checks ran: the one in the pinned ibm_db wheel (zrunbook/clidriver.py)."""
    from zrunbook import clidriver

    return clidriver.GSKIT


def gskit_wheel() -> str:
    from zrunbook import clidriver

    return f"ibm_db {clidriver.VERSION}"


def _listed(items: list[str]) -> str:
    if not items:
        return "none"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def site_groups() -> str:
    """The sites' groups in order; the build fails when the Apache sites disagree."""
    lists = {site: tg.site_groups(site) for site in tg.SITES}
    if len({tuple(v) for v in lists.values()}) != 1:
        raise ValueError(f"the Apache sites name different Groups: {lists}")
    return ", ".join(lists[tg.SITES[0]])


def hybrid_group() -> str:
    first = tg.site_groups(tg.SITES[0])[0]
    if first != tg.HYBRID:
        raise ValueError(f"{tg.SITES[0]} puts {first} first, not {tg.HYBRID}")
    return first


def hybrid_needs_openssl() -> str:
    return ".".join(map(str, tg.needs_openssl(tg.groups_line(tg.SITES[0]))))


def classical_groups() -> str:
    return ", ".join(tg.site_groups(tg.BEFORE_3_5))


def releases_with_hybrid() -> str:
    need = tg.needs_openssl(tg.groups_line(tg.SITES[0]))
    return _listed([d for d, v in tg.openssl_releases() if v is not None and v >= need])


def releases_before_hybrid() -> str:
    need = tg.needs_openssl(tg.groups_line(tg.SITES[0]))
    return _listed([d for d, v in tg.openssl_releases() if v is not None and v < need])


def releases_unconfirmed() -> str:
    return _listed([d for d, v in tg.openssl_releases() if v is None])


def fips_skipped_groups() -> str:
    return _listed(tg.optional_groups(tg.SITES[0]))


# The PKCS #11 attributes of the private key GSKit 8.0.60.5's key management library generates in the token for the
# IHS page's step 2 (GSKKM_CreateNewCertReqSigExt on openCryptoki's soft token,
# checks/standins/ihs/gskit_server/gskserve.c), as p11sak reads them. checks/ihs/test_gskit_server.py asserts the
# key's attributes are exactly these; the IHS key page quotes them.
GSKIT_TOKEN_KEY_ATTRIBUTES = {
    "CKA_TOKEN": True, "CKA_PRIVATE": True, "CKA_LOCAL": True, "CKA_MODIFIABLE": True, "CKA_COPYABLE": True,
    "CKA_DESTROYABLE": True, "CKA_SIGN": True, "CKA_DECRYPT": True, "CKA_UNWRAP": True, "CKA_SENSITIVE": True,
    "CKA_ALWAYS_SENSITIVE": True, "CKA_EXTRACTABLE": True, "CKA_NEVER_EXTRACTABLE": False,
}


def gskit_token_key_attributes() -> str:
    return _listed([f"{name} {'true' if value else 'false'}" for name, value in GSKIT_TOKEN_KEY_ATTRIBUTES.items()])


# What a start of GSKit 8.0.60.5 with a PIN stash older than the token's PIN did on openCryptoki's soft token
# (checks/ihs/test_gskit_server.py asserts both): the error its environment init returned, and the token's flags after
# the first, second and third such start (one failed login per start). The IHS troubleshooting page quotes them.
STALE_STASH_ERROR = "432 GSK_ERROR_PKCS11_TOKEN_BADPASSWORD"
STALE_STASH_FLAGS = ("USER_PIN_COUNT_LOW", "USER_PIN_FINAL_TRY", "USER_PIN_LOCKED")


def stale_stash_error() -> str:
    return STALE_STASH_ERROR


def stale_stash_flags() -> str:
    nths = ("first", "second", "third")
    return ", ".join(f"{flag} after the {nth}" for flag, nth in zip(STALE_STASH_FLAGS, nths, strict=True))


def stale_stash_starts_to_lock() -> str:
    return str(len(STALE_STASH_FLAGS))


# What certbot 4.0.0 reported when Pebble 2.6.0 refused, at finalisation, the request GSKit 8.0.60.5's key management
# library made in the token with the subject's CN as its only name (checks/ihs/test_gskit_server.py asserts it; the
# IHS key page quotes it).
ACME_REFUSES_CN_ONLY = "Order includes different number of DNSnames identifiers than CSR specifies"


def acme_refuses_cn_only() -> str:
    return ACME_REFUSES_CN_ONLY
