"""Day two, renewing the certificate of an Apache token site (docs/how-to/day-two.md).

The renewal as the page runs it on a token site (checks/hosts/apache.py TOKEN_KEY): a new key in the token under a
new label with its CSR (the Apache page's key step with KEY_LABEL), the test CA's certificate for it, the switch
with a graceful reload (snippets/daytwo/switch-token-certificate.sh) while the Apache page's burst check
(check-cold-start.sh) runs as a load of LOAD_CLIENTS x LOAD_EACH new TLS connections, then the old key removed.
Outcome: the new certificate is served, check-key-in-token.sh passes for it, the old key is gone from the token,
and, with the Apache page's prefork MPM, every handshake of the load completed (with Debian's event MPM, fewer than
1 % lost: the finding the day-two page states). Negatives: a certificate that does not carry the new key's public key
is refused before httpd is touched (while ``apachectl -t`` alone accepts it), and the old key is not removed while
httpd's configuration names it. On the two-key site (RSA and ECDSA) a new RSA certificate replaces the RSA pair and
the ECDSA pair stays, so ECDSA-only clients still connect; the step as it was (checks/daytwo/bad/) replaced both.

On amd64 only: a graceful reload with the token key is the same on both architectures; under qemu-user the
s390x host's logins take most of pkcs11-provider's one-second limit (test_apache_cold_start.py says why).
"""

import re
import shlex
import time
from pathlib import Path

import pytest

from checks.hosts import amd64_only
from checks.hosts.apache import CA, ECDSA_CERT, TOKEN_KEY, put, serve_token, serve_token_ecdsa, use_prefork
from checks.hosts.steps import snippet_path
from checks.hosts.token import ADMIN, PINS, slot_of, token_env
from checks.hosts.util import ok, output

pytestmark = pytest.mark.only_hosts("debian13-amd64", why=amd64_only.SLOW_LOGIN)

SWITCH = "daytwo/switch-token-certificate.sh"
REMOVE = "daytwo/remove-old-token-key.sh"
KEY_STEP = "ihs/apache/create-token-key-and-csr.sh"
TEST_CA = "ihs/apache/test-ca.sh"
LOAD = "ihs/apache/check-cold-start.sh"
CHECK_KEY = "crypto/verify/check-key-in-token.sh"
SITE = "/etc/apache2/sites-available/tls.conf"
BAD = Path(__file__).resolve().parent / "bad"
RSA_ONLY, ECDSA_ONLY = "rsa_pss_rsae_sha256:RSA+SHA256", "ECDSA+SHA256"  # what a client of one key type offers
OLD, NEW = "apachekey", "apachekey-2"
NEW_CSR, NEW_CERT = "/etc/ssl/www.example.com-2.csr", "/etc/ssl/certs/www.example.com-2.crt"
LOAD_CLIENTS, LOAD_EACH = 16, 200


def new_key_and_certificate(host) -> None:
    ok(host, f"{token_env()} KEY_LABEL={NEW} CSR={NEW_CSR} bash {snippet_path(KEY_STEP)}")
    ok(host, f"CA_DIR={CA} bash {snippet_path(TEST_CA)} sign {NEW_CSR} {NEW_CERT}")


def served_fingerprint(host) -> str:
    return host.run("openssl s_client -connect 127.0.0.1:443 -servername www.example.com </dev/null 2>/dev/null"
                    " | openssl x509 -noout -fingerprint -sha256").stdout.strip()


def token_labels(host) -> str:
    return ok(host, f"PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} p11sak list-key all --slot {slot_of(host)}")


def handshakes_so_far(host) -> int:
    """The load's connections ended so far: check-cold-start.sh writes a line per connection in its mktemp folder."""
    return int(ok(host, "cat /tmp/tmp.*/* 2>/dev/null | wc -l").strip())


def remove_old_key(host):
    return host.run(f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} TOKEN_ADMIN={ADMIN} bash {snippet_path(REMOVE)} {OLD}")


def switch_under_load(host, prefork: bool) -> tuple[int, int]:
    """The renewal on the token site (with the Apache page's MPM step for first users when prefork): new key and
    certificate, the removal refused while the site names the old key, the switch while the burst check runs, the
    new certificate served, the old key removed, the key check passing. Returns (handshakes lost, handshakes)."""
    # mod_ssl's and the TLS library's errors in the log (LogLevel ssl:info), so that a failed handshake says why
    put(host, "/etc/apache2/conf-enabled/zz-ssl-info.conf", "LogLevel warn ssl:info\n")
    ca = serve_token(host)
    if prefork:
        use_prefork(host)
    new_key_and_certificate(host)
    refused = remove_old_key(host)  # negative: the site still names the old key
    assert refused.rc == 1, output(refused)
    assert "still names apachekey" in refused.stderr, output(refused)
    assert f'"{OLD}"' in token_labels(host)

    # the load: the Apache page's burst check in the background, its result and status in files
    ok(host, f"rm -f /tmp/load.*; setsid bash -c 'CA_FILE={ca} CLIENTS={LOAD_CLIENTS} CONNECTIONS={LOAD_EACH}"
             f" bash {snippet_path(LOAD)} www.example.com >/tmp/load.out 2>&1; echo $? >/tmp/load.rc'"
             " </dev/null >/dev/null 2>&1 & echo $! >/tmp/load.pid")
    for _ in range(100):  # the switch starts once the load's connections reach httpd
        if ok(host, "ss -Htn state established '( dport = :443 )' | wc -l").strip() != "0":
            break
        host.run("sleep 0.1")
    else:
        raise AssertionError("the load made no connection: " + host.run("cat /tmp/load.*").stdout)
    began, done_before = time.monotonic(), handshakes_so_far(host)
    switched = host.run(f"bash {snippet_path(SWITCH)} {NEW_CERT} {NEW}")
    switch_seconds, during = time.monotonic() - began, handshakes_so_far(host) - done_before
    assert switched.rc == 0, output(switched) + host.run("tail -20 /var/log/apache2/error.log").stdout
    assert host.run("test -e /tmp/load.rc").rc == 1, "the load ended before the switch did: make it larger"
    for _ in range(600):
        if host.run("test -e /tmp/load.rc").rc == 0:
            break
        host.run("sleep 0.5")
    load = host.run("cat /tmp/load.out /tmp/load.rc").stdout
    log = host.run("grep -v 'AH00558\\|resuming normal\\|engine\\|DSO\\|AH10132' /var/log/apache2/error.log"
                   " | grep -i 'error\\|fail\\|AH00493' | tail -30").stdout
    print(f"\nswitch {switch_seconds:.1f} s, {during} handshakes ended meanwhile; whole load: {load.strip()}")
    print(log)
    done = re.search(r"^(\d+) of (\d+) new TLS connections completed", load, re.M)
    assert done, load
    total = LOAD_CLIENTS * LOAD_EACH
    assert done.group(2) == str(total), load + log
    failed = total - int(done.group(1))
    print(f"handshakes lost during the reload ({'prefork' if prefork else 'event'} MPM): {failed} of {total}")

    assert served_fingerprint(host) == ok(host, f"openssl x509 -in {NEW_CERT} -noout -fingerprint -sha256").strip()
    removed = remove_old_key(host)
    assert removed.rc == 0, output(removed)
    labels = token_labels(host)
    assert f'"{OLD}"' not in labels, labels
    assert f'"{NEW}"' in labels, labels
    env = f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot_of(host)} SERVER_NAME=www.example.com"
    check = host.run(f"runuser -u www-data -- env {env} bash {snippet_path(CHECK_KEY)} localhost:443")
    assert check.rc == 0, output(check)
    return failed, total


@pytest.mark.uses("ihs/apache/use-prefork-mpm-debian.sh")
@pytest.mark.snippet(SWITCH, REMOVE, LOAD, CHECK_KEY, KEY_STEP, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_with_prefork_the_renewal_under_load_serves_the_new_token_key_and_loses_no_handshake(fresh_host):
    """The token site as the Apache page sets it up for first users (prefork): each connection is served by a
    process that made its own login first, so the reload's new workers lose nothing. No exclusive_cpu: no handshake
    waits on a limit shorter than the burst check's 30 s per client."""
    failed, total = switch_under_load(fresh_host, prefork=True)
    assert failed == 0, f"{failed} of {total} handshakes lost"


@pytest.mark.snippet(SWITCH, REMOVE, LOAD, CHECK_KEY, KEY_STEP, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.exclusive_cpu("the reload's new workers log in to the token while the load runs, and must do so within "
                           "pkcs11-provider's one second; the starved case is test_apache_cold_start.py's "
                           "test_on_a_starved_host_with_the_event_mpm_new_workers_fail_while_their_token_login_runs")
def test_with_the_event_mpm_the_renewal_under_load_loses_under_one_percent_of_handshakes(fresh_host):
    """A finding, not a pass: with Debian's default event MPM a graceful reload under this load has lost up to 9 of
    3200 handshakes ("internal error" alerts) on this 2-core machine, also with no other test running (the day-two
    page gives the counts): a new worker's threads wait at most one second for its token login. The check holds the
    rate below 1 % and prints the count. With pkcs11-module-cache-keys at its default (true) a new worker fails
    every handshake of its first second (test_apache_cold_start.py's negative)."""
    failed, total = switch_under_load(fresh_host, prefork=False)
    assert failed < total // 100, f"{failed} of {total} handshakes lost"


@pytest.mark.negative("daytwo/switch-token-certificate.sh",
                      expects="a certificate without the new key is refused before the reload")
@pytest.mark.snippet(SWITCH, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_certificate_without_the_new_key_is_refused_before_the_reload_and_the_old_site_serves(fresh_host):
    host = fresh_host
    ca = serve_token(host)
    new_key_and_certificate(host)
    before = served_fingerprint(host)
    # a certificate from the same CA for a key in a file: not the token key's
    ok(host, "openssl req -new -newkey rsa:2048 -noenc -keyout /tmp/other.key -subj /CN=www.example.com"
             " -out /tmp/other.csr 2>/dev/null")
    ok(host, f"CA_DIR={CA} bash {snippet_path(TEST_CA)} sign /tmp/other.csr /tmp/other.crt")
    # httpd's own syntax check would let it through: it loads no certificate and no key
    ok(host, f"cp -p {SITE} /tmp/site.orig && sed -i 's#^\\( *SSLCertificateFile \\).*#\\1/tmp/other.crt#;"
             f" s#object=apachekey;#object={NEW};#' {SITE} && apachectl -t && cp -p /tmp/site.orig {SITE}")
    site = ok(host, f"sha256sum {SITE}")
    refused = host.run(f"bash {snippet_path(SWITCH)} /tmp/other.crt {NEW}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"Refused: /tmp/other.crt does not carry the public key of {NEW}"), output(refused)
    assert ok(host, f"sha256sum {SITE}") == site
    assert served_fingerprint(host) == before != ""
    still = host.run("echo | openssl s_client -connect 127.0.0.1:443 -servername www.example.com"
                     f" -CAfile {shlex.quote(ca)} -verify_return_error -brief 2>&1")
    assert still.rc == 0, still.stdout


def served_to(host, sigalgs: str, ca: str):
    """The fingerprint of the certificate a client offering only `sigalgs` gets ('' when its handshake fails)."""
    return host.run(f"openssl s_client -connect 127.0.0.1:443 -servername www.example.com -sigalgs {sigalgs}"
                    f" -CAfile {ca} -verify_return_error </dev/null 2>/dev/null"
                    " | openssl x509 -noout -fingerprint -sha256").stdout.strip()


def fingerprint(host, cert: str) -> str:
    return ok(host, f"openssl x509 -in {cert} -noout -fingerprint -sha256").strip()


@pytest.mark.snippet(SWITCH, checker="testinfra")
@pytest.mark.snippet("ihs/apache/apache-tls-pkcs11-ecdsa.conf", checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_on_the_two_key_site_a_new_rsa_certificate_replaces_the_rsa_pair_and_the_ecdsa_pair_stays(fresh_host):
    host = fresh_host
    ca = serve_token_ecdsa(host)
    ecdsa = fingerprint(host, ECDSA_CERT)
    assert served_to(host, ECDSA_ONLY, ca) == ecdsa
    new_key_and_certificate(host)
    switched = host.run(f"bash {snippet_path(SWITCH)} {NEW_CERT} {NEW}")
    assert switched.rc == 0, output(switched)
    assert f"It still serves {ECDSA_CERT} with its own key, as before." in switched.stdout, output(switched)
    assert served_to(host, RSA_ONLY, ca) == fingerprint(host, NEW_CERT)
    assert served_to(host, ECDSA_ONLY, ca) == ecdsa
    site = ok(host, f"grep -E 'SSLCertificate(Key)?File' {SITE}")
    assert site.count(NEW_CERT) == 1, site
    assert "object=apachekey-ec;" in site, site
    assert f"object={NEW};" in site, site


@pytest.mark.negative("daytwo/switch-token-certificate.sh",
                      expects="the earlier switch drops the ECDSA pair, so ECDSA-only clients get nothing")
@pytest.mark.snippet(SWITCH, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_switch_as_it_was_drops_the_ecdsa_pair_of_the_two_key_site(fresh_host):
    """Negative: the earlier step rewrote every pair, reported success, and ECDSA-only clients failed."""
    host = fresh_host
    ca = serve_token_ecdsa(host)
    new_key_and_certificate(host)
    put(host, "/tmp/old-switch.sh", (BAD / "switch-token-certificate-replaces-every-pair.sh").read_text())
    switched = host.run(f"bash /tmp/old-switch.sh {NEW_CERT} {NEW}")
    assert switched.rc == 0, output(switched)  # it said it worked
    assert served_to(host, ECDSA_ONLY, ca) == ""  # an ECDSA-only client gets no certificate any more
