"""Statements issue 33 found wrong or missing, each pinned to the page that must carry it and to its source, so a
later edit cannot silently bring the old wording back."""

import pytest

from zrunbook import ROOT

# (page, text it must say, text it must no longer say, where the fact comes from)
STATEMENTS = [
    ("docs/how-to/ctg/02-java-providers-and-jvm.md",
     "by less, but still, for 4 KB ones",
     "for 4 KB payloads throughput was the same with and without it",
     "the CICS TG study, section 2.4: even for 4K channels hardware cryptography saves CPU"),
    ("docs/how-to/crypto/assign-adapters.md",
     "under z/VM 6.4 needs APAR VM65942",
     None,
     "libica README.md, requirements: ECC via shared CEX4C adapter under z/VM 6.4 requires APAR VM65942"),
    ("docs/how-to/crypto/03-opencryptoki.md",
     "A `#` starts a comment there, inside a slot's braces too",
     "a `#` comment inside a slot's braces is a syntax error",
     "checks/crypto/test_service_tokens.py: 3.23's pkcsslotd reads the service stanza with a '#' line in its braces"),
    ("docs/how-to/verify-your-fleet.md",
     "A minimal Debian or Ubuntu has none of `make`",
     None,
     "debootstrap --variant=minbase (the walkthrough host) has no make, python3-venv or openssh-client"),
    ("docs/how-to/was/05-pkcs11-provider.md",
     "That finding is openCryptoki 3.23's (Debian 13). openCryptoki 3.27 makes `CKA_PRIVATE` true by default",
     None,
     "opencryptoki commit 9eb7951a (tag v3.27.0): Set CKA_PRIVATE=TRUE by default for secret and private keys"),
    ("docs/how-to/ihs/05-apache-pkcs11-provider.md",
     "IBM's `openssl-pkcs11-sign-provider` is an OpenSSL 3 provider made for openCryptoki",
     None,
     "github.com/opencryptoki/openssl-pkcs11-sign-provider; Fedora and Ubuntu (25.04) package lists"),
    ("docs/how-to/was/05-pkcs11-provider.md",
     "IBM Java 8 has a third route on Linux on IBM Z: IBMJCECCA",
     None,
     "IBM SDK 8, jcecca_linux.html: available only for z/OS and 64-bit Linux for IBM Z"),
]


@pytest.mark.parametrize(("page", "says", "no_longer", "source"), STATEMENTS, ids=[s[0] for s in STATEMENTS])
def test_the_page_states_the_sourced_fact(page, says, no_longer, source):
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    assert says in text, f"{page} must say {says!r} ({source})"
    if no_longer:
        assert no_longer not in text, f"{page} still says {no_longer!r}, which its source contradicts ({source})"
