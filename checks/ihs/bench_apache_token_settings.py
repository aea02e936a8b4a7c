"""make bench WHAT=token-settings: which pkcs11-provider settings change what the token costs Apache httpd (issue 46,
item 2). On the amd64 host, the two-key token site (RSA 2048 and ECDSA P-256 in openCryptoki's soft token) under each
setting of zrunbook.results.token_settings.SETTINGS (the token page's OpenSSL configuration with one line changed, or
with the page's prefork MPM step),
and the same certificate types with their keys in files, measured in interleaved rounds so that a drift of the
machine falls on every setting alike: ROUNDS rounds, in each every setting once: httpd stopped and started with it,
the first handshakes counted (failures allowed: with cache-keys true a new worker's first use of the key waits for a
session, the cold-start page's finding), then N new TLS 1.3 connections one after another per key type, rated per
server CPU-second as make bench WHAT=token does. The settings in token_settings.SCRATCH run scratch builds of
pkcs11-provider (checks/ihs/p11prov_builds.py; they need ZR_PKCS11_PROVIDER_GIT, a clone of upstream's repository).
ROUNDS=N in the environment changes the number of rounds (at least 3: the data file's checker refuses fewer).
Writes snippets/results/measured/token-settings.csv.

Not part of `make check` (the file name does not start with test_).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from checks.hosts import apache
from checks.hosts import engine as eng
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.pkcs11_spy import handshakes as spied_handshakes
from checks.hosts.pkcs11_spy import spy_between_provider_and_token
from checks.hosts.steps import snippet_path
from checks.hosts.util import ok
from checks.ihs import p11prov_builds
from checks.ihs.bench_apache_token import SITE, handshakes, keys_in_files
from zrunbook.results import token_profile, token_settings

pytestmark = pytest.mark.only_hosts("debian13-amd64", why="the soft token's figures are the ones the goal is set on")

ROUNDS = int(os.environ.get("ROUNDS", "5"))
COUNT = 600  # handshakes per run and key type
FIRST = 8  # handshakes after each start, not rated
CONF = "/etc/ssl/openssl-pkcs11.conf"
PREFORK_STEP = "ihs/apache/use-prefork-mpm-debian.sh"
CERTS = ("/etc/ssl/certs/www.example.com.crt", apache.ECDSA_CERT)
SIGALGS = {"rsa2048": "rsa_pss_rsae_sha256", "ecdsa-p256": "ECDSA+SHA256"}


def first_handshakes(host, ca: str, sigalgs: str) -> int:
    """The first handshakes after a start, one after another; returns how many failed."""
    out = ok(host, f"n=0; for i in $(seq {FIRST}); do timeout 60 openssl s_client -connect 127.0.0.1:443 "
                   f"-servername www.example.com -CAfile {ca} -verify_return_error -tls1_3 -no_ticket -brief "
                   f"-sigalgs {sigalgs} </dev/null >/dev/null 2>&1 || n=$((n+1)); done; echo $n")
    return int(out.strip())


def rate(host, ca: str, sigalgs: str) -> float:
    before = apache.httpd_cpu_seconds(host)
    handshakes(host, ca, COUNT, sigalgs)
    return COUNT / (apache.httpd_cpu_seconds(host) - before)


def steady_calls(host, ca: str, page_conf: str, line: str) -> Counter:
    """The PKCS #11 calls of a steady-state RSA handshake under a setting (pkcs11-spy, as the profile check counts)."""
    envvars = ok(host, "cat /etc/apache2/envvars")
    apache.put(host, CONF, page_conf.replace(token_settings.CACHE_KEYS, line))
    spy_between_provider_and_token(host)
    _, steady = token_profile.split_first(spied_handshakes(host, ca, SIGALGS["rsa2048"], count=30))
    apache.put(host, "/etc/apache2/envvars", envvars)
    return token_profile.per_handshake(steady, f"steady state with {line!r}")


# the bench merges its new rows into the data file it writes (a read the observer sees)
@pytest.mark.uses("results/measured/token-settings.csv", "ihs/apache/use-prefork-mpm-debian.sh")
@pytest.mark.from_state(TOKEN_KEY)
def test_token_settings_against_file_key(fresh_host):
    host = fresh_host
    ca = apache.serve_token_ecdsa(host)
    page_conf = ok(host, f"cat {CONF}")
    if token_settings.SCRATCH:
        built = p11prov_builds.install(host, eng.Engine.detect().cli)
        print("scratch builds in the host: " + ", ".join(f"{n} {p}" for n, p in built.items()))
        # what each build does per handshake, before it is timed: the patch's purpose is a handshake without
        # C_OpenSession and C_CloseSession, and the control must make the calls Debian's library makes
        calls = {s: steady_calls(host, ca, page_conf, token_settings.SETTINGS[s][0])
                 for s in (token_settings.PAGE, *token_settings.SCRATCH)}
        for s, c in calls.items():
            print(f"{s}: {c[token_profile.ALL]} calls per steady-state handshake: {dict(sorted(c.items()))}")
        assert calls["build 1.0"] == calls[token_settings.PAGE], "the scratch build of 1.0 calls the token " \
                                                                "differently from Debian's library"
        for s in ("build 1.0+fork-reset", "build 1.2.0"):
            assert (calls[s]["C_OpenSession"], calls[s]["C_CloseSession"]) == (0, 0), f"{s}: {calls[s]}"
    assert token_settings.CACHE_KEYS in page_conf.splitlines(), f"{CONF} has no line '{token_settings.CACHE_KEYS}'"
    # the site file and its two certificates, as the token site has them and as keys_in_files leaves them
    saved = f"{SITE} {CERTS[0]} {CERTS[1]}"
    ok(host, f"mkdir -p /tmp/token /tmp/file && cp {saved} /tmp/token/")
    keys_in_files(host, ecdsa=True)
    ok(host, f"cp {saved} /tmp/file/")
    configs = {setting: (line, "/tmp/token") for setting, (line, _) in token_settings.SETTINGS.items()}
    configs[token_settings.FILE] = (token_settings.CACHE_KEYS, "/tmp/file")
    configs[token_settings.FILE_PREFORK] = (token_settings.CACHE_KEYS, "/tmp/file")
    rates: dict[tuple[str, str], list[float]] = {}
    failed: dict[tuple[str, str], int] = {}
    t0 = time.monotonic()
    for n in range(ROUNDS):
        for setting, (line, site) in configs.items():
            apache.put(host, CONF, page_conf.replace(token_settings.CACHE_KEYS, line))
            ok(host, f"cp {site}/{Path(SITE).name} {SITE} && cp {site}/{Path(CERTS[0]).name} {CERTS[0]} && "
                     f"cp {site}/{Path(CERTS[1]).name} {CERTS[1]}")
            mpm = (f"bash {snippet_path(PREFORK_STEP)}" if setting in token_settings.PREFORK
                   else "a2dismod -q mpm_prefork && a2enmod -q mpm_event")
            ok(host, f"{mpm} >/dev/null 2>&1")
            try:
                apache.start(host)  # the page's site step: stop and start
            except AssertionError as e:
                log = host.run("tail -20 /var/log/apache2/error.log").stdout
                raise AssertionError(f"{setting}: {e}\n{log}") from e
            for key, sig in SIGALGS.items():
                failed[key, setting] = failed.get((key, setting), 0) + first_handshakes(host, ca, sig)
            for key, sig in SIGALGS.items():
                rates.setdefault((key, setting), []).append(rate(host, ca, sig))
            print(f"round {n + 1} {setting}: " + ", ".join(f"{k} {rates[k, setting][-1]:.0f}" for k in SIGALGS)
                  + f" ({time.monotonic() - t0:.0f} s)", flush=True)
    new = [token_settings.row(host.zr_name, key, setting, COUNT, runs, failed[key, setting])
           for (key, setting), runs in rates.items()]
    token_settings.merge(token_settings.DATA, new)
    print(f"wrote {token_settings.DATA}\n{token_settings.sentence()}")
