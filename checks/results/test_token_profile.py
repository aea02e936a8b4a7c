"""What the token path costs per TLS handshake, counted in PKCS #11 calls (issue 46, item 1), on the amd64 host.

The token site with both keys (apache-tls-pkcs11-ecdsa.conf, as make bench WHAT=token serves it), with OpenSC's
pkcs11-spy put between pkcs11-provider and openCryptoki the way the token page's signing check does it. Per key
type: httpd stopped and started (new workers), then pkcs11_spy.HANDSHAKES full TLS 1.3 handshakes one after another (no
ticket, no session offered back), a marker line written into the spy's log before each. The log is cut at the
markers (zrunbook/results/token_profile.py); each worker's first handshake, which logs in and finds the key, is
counted apart from the steady state. What is asserted is what does not depend on the machine's load: every
steady-state handshake makes the same calls, exactly one signature, no login and no object search; every first
handshake of a worker the same calls, one login and one signature. The table is
snippets/results/measured/token-profile.csv, compared with what the host makes now (ZR_REGENERATE=1 rewrites it).
Counts, not time: the soft token signs in software, and where the CPU goes is not measured here.
"""

from __future__ import annotations

from collections import Counter

import pytest

from checks.hosts import amd64_only, apache
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.pkcs11_spy import CONF, handshakes, spy_between_provider_and_token
from zrunbook.results import token_profile as tp
from zrunbook.shown_output import assert_shown_output

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.NO_P256)

KEYS = {"rsa2048": "rsa_pss_rsae_sha256", "ecdsa_p256": "ECDSA+SHA256"}


def signatures(c: Counter) -> int:
    return sum(c[name] for name in tp.SIGNATURES)


def check_steady(c: Counter, what: str) -> None:
    """A handshake of a worker that has the key already: one signature, no login, no search for the key."""
    assert (c["C_SignInit"], signatures(c)) == (1, 1), f"{what}: {c['C_SignInit']} C_SignInit, {signatures(c)} " \
                                                       "signature(s) per handshake, not one"
    assert (c["C_Login"], c["C_FindObjectsInit"]) == (0, 0), f"{what}: logs in or searches per handshake: {c}"


def check_first(c: Counter, what: str) -> None:
    """A worker's first handshake: it logs in once, finds the key and signs once."""
    assert (c["C_Login"], c["C_SignInit"], signatures(c)) == (1, 1, 1), f"{what}: {c}"
    assert c["C_FindObjectsInit"] >= 1, f"{what}: no search for the key in the worker's first handshake: {c}"


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(tp.REL, apache.ECDSA_SITE, checker="testinfra")
def test_pkcs11_calls_per_handshake_with_the_key_in_the_token(fresh_host):
    ca = apache.serve_token_ecdsa(fresh_host)
    spy_between_provider_and_token(fresh_host)
    columns: dict[str, Counter] = {}
    for key, sigalgs in KEYS.items():
        first, steady = tp.split_first(handshakes(fresh_host, ca, sigalgs))
        columns[f"{key}_first_per_worker"] = tp.per_handshake(first, f"{key}, each worker's first handshake")
        columns[f"{key}_steady_state"] = tp.per_handshake(steady, f"{key}, the later handshakes")
        check_first(columns[f"{key}_first_per_worker"], f"{key}, first handshake per worker")
        check_steady(columns[f"{key}_steady_state"], f"{key}, steady state")
        print(f"{key}: {len(first)} worker(s), {len(steady)} steady-state handshakes")
    assert_shown_output(tp.REL, tp.table(columns), normalise=lambda text: text)


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(apache.ECDSA_SITE, checker="testinfra")
def test_a_larger_session_cache_removes_the_session_opened_and_closed_per_signature(fresh_host):
    """Why each steady-state handshake opens and closes a session: pkcs11-provider 1.0 closes a session it gets back
    once its pool counts pkcs11-module-cache-sessions (5 by default) open sessions (p11prov_return_session,
    src/session.c); by the source, a worker's count starts from what httpd's parent had counted before the fork
    (p11prov_session_pool_fork_reset resets the handles, not the count). With the limit raised to 10 (not a page
    setting: a count, no rate measured) the worker keeps its session and the handshake makes the same calls less
    C_OpenSession and C_CloseSession."""
    ca = apache.serve_token_ecdsa(fresh_host)
    spy_between_provider_and_token(fresh_host)
    key, sigalgs = "rsa2048", KEYS["rsa2048"]
    _, steady = tp.split_first(handshakes(fresh_host, ca, sigalgs, count=30))
    default = tp.per_handshake(steady, f"{key}, the later handshakes")
    fresh_host.run_expect([0], f"sed -i 's|^pkcs11-module-cache-keys = false$|&\\npkcs11-module-cache-sessions = 10|' "
                               f"{CONF} && grep -q '^pkcs11-module-cache-sessions = 10$' {CONF}")
    _, steady = tp.split_first(handshakes(fresh_host, ca, sigalgs, count=30))
    larger = tp.per_handshake(steady, f"{key}, the later handshakes with 10 cached sessions")
    check_steady(larger, "with 10 cached sessions")
    assert (default["C_OpenSession"], default["C_CloseSession"]) == (1, 1), default
    fewer = default - larger
    assert (fewer["C_OpenSession"], fewer["C_CloseSession"], fewer[tp.ALL]) == (1, 1, 2), (default, larger)


def _log(per_handshake: list[list[str]], pid: int = 7) -> str:
    """A spy log in pkcs11-spy's format: a marker, then each call with its process and CKR_OK."""
    out, n = [], 0
    for calls in per_handshake:
        out.append(f"{tp.MARK} {len(out)}")
        for name in calls:
            out += ["", f"{n}: {name}", f"P:{pid}; T:0x1 2026-01-01 00:00:00.000", "Returned:  0 CKR_OK"]
            n += 1
    return "\n".join(out) + "\n"


STEADY = ["C_GetSessionInfo", "C_OpenSession", "C_SignInit", "C_SignUpdate", "C_SignFinal", "C_CloseSession"]


@pytest.mark.negative(invariant="the token profile's steady state: the same calls every handshake, one signature",
                      expects="a handshake with other calls fails (different calls), one that signs twice fails (2 "
                              "signature)")
def test_a_second_signature_in_one_handshake_fails_the_profile():
    """The negative case: a handshake that signs twice fails the steady-state check, and one handshake that makes
    more calls than the others fails the 'same calls every time' check."""
    first, steady = tp.split_first(tp.segments(_log([["C_Login", *STEADY], STEADY, STEADY + ["C_SignFinal"]])))
    with pytest.raises(AssertionError, match="different calls"):
        tp.per_handshake(steady, "steady")
    with pytest.raises(AssertionError, match="2 signature"):
        check_steady(tp.counts(steady[1]), "steady")
    check_steady(tp.per_handshake(steady[:1], "steady"), "steady")


def test_calls_from_two_processes_in_one_handshake_are_not_counted():
    two = _log([STEADY]) + "\n0: C_Sign\nP:8; T:0x1 2026-01-01 00:00:00.000\nReturned:  0 CKR_OK\n"
    with pytest.raises(AssertionError, match="processes"):
        tp.split_first(tp.segments(two))
