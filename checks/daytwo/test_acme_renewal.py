"""Day two, renewing a token site's certificate automatically over ACME (docs/how-to/renew-automatically.md).

The CA is Pebble (Let's Encrypt's ACME test server, Debian's package), run inside the token site's container with
a root of its own: the containers have no network, and Pebble validates over TCP against the site's port 80 as a
CA elsewhere would, with HTTP-01 pointed at port 80 and www.example.com resolving to the container itself. Pebble's
test switches used are the ones that take out its randomness (no sleep before validating, no rejected nonces, no
reuse of an earlier valid authorisation, so each renewal answers a challenge); PEBBLE_VA_ALWAYS_VALID is not used:
the site must really serve the challenge. The site trusts Pebble's root as a reader's site trusts its CA: in the
system's trust store (update-ca-certificates).

From the TOKEN_KEY state (checks/hosts/apache.py): one renewal end to end with
snippets/daytwo/acme/renew-token-certificate-acme.sh; the served certificate is the new one, issued by Pebble, its
key in the token, the old key removed, and no file written during the renewal holds a PEM private key or the new
key's modulus (hex or raw). Negatives: a wrong document root (Pebble's HTTP-01 fails), a PIN that is not httpd's
and a token with a failed login counted (both stop before any login, flags unchanged), a chain whose root the
site does not trust, a token whose object store is read-only and a full token. Each stops with a sentence, the old
certificate keeps serving, and the new key made for the attempt leaves the token again; the failed runs leave exit
status 1 in the renewal's metrics, on which the monitoring page's CertificateRenewalFailing fires (promtool). The
decision by age: certificates of every lifetime in the lifetimes table, just before and just after two thirds.
The same renewal under the Apache page's burst check (16 clients, round after round)
must fail no handshake; the timer and service pass systemd-analyze verify, and on a host booted with systemd
(Engine.start's boot) the timer is scheduled in its window and the service retries, renews or stops as the page
says; the cron line runs in cron's environment (checks/hosts/cron.py), and without the file's PATH it fails and
says so. The renewal runs from the snippet bundle as the page's install step installs it (/opt/zrunbook/snippets),
under a trace of every program's arguments (checks/hosts/argv_trace.py): no PIN in any. The two-key site renews
each pair with a key like the one it replaces; a copy httpd's user cannot read, or a folder others can write, is
refused before any key is made; the install step refuses a changed bundle.

amd64 only: Pebble and certbot are in the amd64 host's image only (checks/hosts/Containerfile).
"""

import json
import re
import time
from pathlib import Path

import pytest
import yaml

from checks.hosts import bundle, cron
from checks.hosts.acme import (
    ACME,
    ENV_FILE,
    PEBBLE,
    RENEWAL_STEPS,
    UNIT,
    age_served_certificate,
    booted,
    install_bundle,
    served_fingerprint,
    start_pebble,
    token_flags,
    token_labels,
    unit_state,
)
from checks.hosts.apache import TOKEN_KEY, put, serve_token, serve_token_ecdsa, use_prefork
from checks.hosts.argv_trace import holding, seen, traced
from checks.hosts.steps import snippet_path
from checks.hosts.token import ADMIN, PINS, slot_of
from checks.hosts.util import ok, output
from zrunbook import SNIPPETS
from zrunbook.daytwo import renewal as schedule
from zrunbook.monitor import promtool

pytestmark = pytest.mark.only_hosts("debian13-amd64",
                                    why="Pebble and certbot are in the amd64 image only (checks/hosts/Containerfile)")

RENEW = "daytwo/acme/renew-token-certificate-acme.sh"
SERVICE, TIMER, CRON = (f"daytwo/acme/renew-token-certificate.{k}" for k in ("service", "timer", "cron"))
OLD = "apachekey"
SITE = "/etc/apache2/sites-available/tls.conf"
TEXTFILE = "/tmp/zr-textfile"  # the renewal's metrics (TEXTFILE_DIR), as node_exporter's textfile collector reads them
METRICS = f"{TEXTFILE}/zrunbook-renewal-www.example.com.prom"
RULES = "monitor/zrunbook-alerts.yml"
SCAN = r"""
import os, sys
marker, modulus = sys.argv[1], bytes.fromhex(sys.argv[2])
since = os.stat(marker).st_mtime
hexes = (sys.argv[2].upper().encode(), sys.argv[2].lower().encode())
found, seen = [], 0
for top, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys", "/dev")]
    for name in files:
        path = os.path.join(top, name)
        try:
            if not os.path.isfile(path) or os.path.islink(path) or os.stat(path).st_mtime < since:
                continue
            data = open(path, "rb").read()
        except OSError:
            continue
        seen += 1
        if b"PRIVATE" + b" KEY-----" in data:
            found.append(path + ": a PEM private key")
        # the token's own store keeps the public key object, modulus in clear: the key's home, not a copy of it
        if not path.startswith("/var/lib/opencryptoki/") and (modulus in data or any(h in data for h in hexes)):
            found.append(path + ": the key's modulus")
print(seen)
print("\n".join(found))
"""


def renew(host, *args: str, **env: str):
    """The renewal as the page runs it: from the snippet bundle its install step put in /opt/zrunbook/snippets."""
    if host.run(f"test -f {bundle.installed('MANIFEST.json')}").rc != 0:
        bundle.install(host)
    values = {"TOKEN_ADMIN": ADMIN, "ACME_SERVER": ACME, "ACME_CA_BUNDLE": f"{PEBBLE}/listener.crt",
              "TEXTFILE_DIR": TEXTFILE, **env}
    pairs = " ".join(f"{k}={v}" for k, v in values.items())
    return host.run(f"install -d -m 0755 {TEXTFILE} && env {pairs} bash {bundle.installed(RENEW)} {' '.join(args)}")


def renewal_metrics(host, tmp_path: Path | None = None) -> dict[str, float]:
    """The renewal's metrics file (promtool check metrics on a copy when tmp_path is given), as name -> value."""
    text = ok(host, f"cat {METRICS}")
    if tmp_path is not None:
        (tmp_path / "renewal.prom").write_text(text, encoding="utf-8")
        assert promtool.metrics_problems(tmp_path / "renewal.prom") == []
    assert 'server_name="www.example.com"' in text, text
    assert ("# HELP zrunbook_certificate_renewal_last_exit_status The last run's exit status (0 renewed or not due,"
            " 1 not renewed, 3 switched but a check failed, 4 PIN doubtful).") in text, text
    return {line.split("{")[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def failing_alert_fires(tmp_path: Path, metrics: dict[str, float]) -> list[str]:
    """promtool test rules: the monitoring page's rules fed the renewal's own metrics (host web1) must fire
    CertificateRenewalFailing after an hour and a quarter; an empty list when they do."""
    series = [{"series": f'{k}{{instance="web1",server_name="www.example.com"}}', "values": f"{v:g}x90"}
              for k, v in metrics.items()]
    status = int(metrics["zrunbook_certificate_renewal_last_exit_status"])
    test = {"rule_files": ["rules.yml"], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": [
                {"eval_time": "75m", "alertname": "CertificateRenewalFailing", "exp_alerts": [
                    {"exp_labels": {"severity": "warning", "instance": "web1", "server_name": "www.example.com"},
                     "exp_annotations": {
                         "summary": f"web1: the certificate renewal for www.example.com failed (exit status {status})",
                         "description": next(r for g in yaml.safe_load((SNIPPETS / RULES).read_text())["groups"]
                                             for r in g["rules"] if r.get("alert") == "CertificateRenewalFailing")
                         ["annotations"]["description"]}}]}]}]}
    (tmp_path / "rules.yml").write_bytes((SNIPPETS / RULES).read_bytes())
    (tmp_path / "renewal.test.yml").write_text(yaml.safe_dump(test), encoding="utf-8")
    return promtool.rule_tests_problems(tmp_path / "renewal.test.yml")






def site_state(host) -> tuple:
    return served_fingerprint(host), ok(host, f"sha256sum {SITE}"), token_labels(host)


@pytest.mark.snippet(RENEW, CRON, checker="testinfra")
@pytest.mark.snippet("daytwo/switch-token-certificate.sh", "daytwo/remove-old-token-key.sh",
                     "crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                     "ihs/apache/create-token-key-and-csr.sh", checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_an_acme_renewal_serves_a_new_token_key_certificate_from_the_ca_and_no_file_holds_the_key(fresh_host):
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    old = served_fingerprint(host)
    assert token_labels(host) == [OLD]
    put(host, "/tmp/zr-scan.py", SCAN)
    bundle.install(host)  # the page's install step, before the scan's start: its files are the bundle's
    ok(host, "touch /tmp/zr-renewal-start && sleep 1")  # files written from here on are the renewal's
    began = time.monotonic()
    with traced(host) as execs:
        renewed = renew(host)
    seconds = time.monotonic() - began
    # no PIN on any command line, where every user of the host reads it (ps); the trace saw the renewal's programs
    assert holding(execs, PINS["TOKEN_USER_PIN"]) == [], holding(execs, PINS["TOKEN_USER_PIN"])
    assert {"certbot", "runuser", "p11sak", "pkcsconf", "openssl"} <= seen(execs), sorted(seen(execs))
    print(f"{len(execs)} programs started during the renewal, none with the PIN among its arguments")
    assert renewed.rc == 0, output(renewed) + host.run(f"tail -20 {PEBBLE}/pebble.log").stdout
    print(f"\nACME renewal end to end: {seconds:.1f} s")
    new = served_fingerprint(host)
    assert new
    assert new != old
    labels = token_labels(host)
    assert OLD not in labels, labels
    assert len(labels) == 1, labels
    assert labels[0].startswith("apachekey-"), labels
    new_cert = ok(host, f"sed -n -E 's/^[[:space:]]*SSLCertificateFile[[:space:]]+//p' {SITE}").strip()
    assert ok(host, f"openssl x509 -in {new_cert} -noout -fingerprint -sha256").strip() == new
    # issued by Pebble: the chain verifies against Pebble's root alone, and not against the old test CA
    ok(host, f"openssl verify -no-CApath -no-CAstore -CAfile {PEBBLE}/root.pem -untrusted {new_cert} {new_cert}")
    test_ca = "-no-CApath -no-CAstore -CAfile /root/zr-test-ca/ca.crt"
    assert host.run(f"openssl verify {test_ca} -untrusted {new_cert} {new_cert}").rc != 0
    dates = ok(host, f"openssl x509 -in {new_cert} -noout -startdate -enddate")
    assert "renew: www.example.com serves" in renewed.stdout, output(renewed)
    # certbot keeps no lineage of a --csr certificate: Debian's certbot timer and cron file find nothing to renew
    assert host.run("ls /etc/letsencrypt/live 2>/dev/null | grep -q .").rc == 1
    # the key check ran inside the renewal; run it again here against what is served now
    check = host.run(f"runuser -u www-data -- env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot_of(host)}"
                     f" SERVER_NAME=www.example.com bash {snippet_path('crypto/verify/check-key-in-token.sh')}"
                     " localhost:443")
    assert check.rc == 0, output(check)
    modulus = ok(host, f"openssl x509 -in {new_cert} -noout -modulus").strip().split("=", 1)[1]
    scan = ok(host, f"python3 /tmp/zr-scan.py /tmp/zr-renewal-start {modulus}").splitlines()
    print(f"{scan[0]} files written during the renewal, none with a private key; certificate {dates.split()}")
    assert int(scan[0]) > 0, scan
    assert scan[1:] in ([], [""]), scan
    # the cron line, as the page installs it, run in cron's environment (checks/hosts/cron.py): the certificate is
    # 0 days into its 47, so it is not due; the line's output reaches syslog through logger
    install_bundle(host)
    cron_file = (SNIPPETS / CRON).read_text(encoding="utf-8")
    cron.syslog(host)
    ran = cron.run_line(host, cron_file)
    assert ran.rc == 0, output(ran)
    assert "is not due yet: renewal from" in cron.logged(host, "is not due yet")
    assert served_fingerprint(host) == new
    cron_metrics = ok(host, "cat /var/lib/prometheus/node-exporter/zrunbook-renewal-www.example.com.prom")
    assert 'zrunbook_certificate_renewal_last_exit_status{server_name="www.example.com"} 0' in cron_metrics
    # the renewal's own metrics: status 0, a renewal time, and the new certificate due at two thirds of its life
    metrics = renewal_metrics(host)
    assert metrics["zrunbook_certificate_renewal_last_exit_status"] == 0, metrics
    assert metrics["zrunbook_certificate_renewal_last_renewed_timestamp_seconds"] > 0, metrics
    start, end = (int(ok(host, f"date -d \"$(openssl x509 -in {new_cert} -noout -{w}date | cut -d= -f2)\" +%s"))
                  for w in ("start", "end"))
    assert metrics["zrunbook_certificate_renewal_due_timestamp_seconds"] == start + (end - start) * 2 // 3
    # the scan's negative: a key written to a file in the same window is found
    ok(host, "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out /tmp/leaked.pem")
    leaked = ok(host, f"python3 /tmp/zr-scan.py /tmp/zr-renewal-start {modulus}").splitlines()
    assert "/tmp/leaked.pem: a PEM private key" in leaked, leaked


@pytest.mark.uses("daytwo/remove-old-token-key.sh", "monitor/zrunbook-alerts.yml")
@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="the challenge fails and the old certificate keeps serving")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_wrong_document_root_fails_the_challenge_and_the_old_certificate_keeps_serving(fresh_host, tmp_path):
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    before = site_state(host)
    ok(host, "install -d /srv/not-served")
    refused = renew(host, WEBROOT="/srv/not-served")
    assert refused.rc == 1, output(refused)
    assert "renew: the CA did not issue a certificate for www.example.com" in refused.stderr, output(refused)
    assert "the site still serves" in refused.stderr, output(refused)
    assert site_state(host) == before  # same certificate served, same site file, only the old key in the token
    # Pebble asked the site for the challenge, and the site answered 404: the file was written elsewhere
    ok(host, f"grep -q 'Attempting to validate w/ HTTP: http://www.example.com:80/.well-known/acme-challenge/'"
             f" {PEBBLE}/pebble.log")
    assert re.search(r'"GET /\.well-known/acme-challenge/\S+ HTTP/1\.1" 404 ',
                     ok(host, "cat /var/log/apache2/access.log")), ok(host, "tail /var/log/apache2/access.log")
    print(f"\n{refused.stderr}")
    # the failure is in the metrics node_exporter reads, and the monitoring page's alert fires on them
    metrics = renewal_metrics(host, tmp_path)
    assert metrics["zrunbook_certificate_renewal_last_exit_status"] == 1, metrics
    assert "zrunbook_certificate_renewal_last_renewed_timestamp_seconds" not in metrics, metrics
    assert failing_alert_fires(tmp_path, metrics) == []
    print(ok(host, f"cat {METRICS}"))


@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="the renewal stops before any login with a PIN that is not httpd's")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_pin_that_is_not_httpds_stops_before_any_login(fresh_host):
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    before, flags = site_state(host), token_flags(host)
    refused = renew(host, TOKEN_USER_PIN="11112222")
    assert refused.rc == 4, output(refused)
    assert refused.stderr.startswith("renew: not logged in: TOKEN_USER_PIN is not the PIN in httpd's PIN file"), \
        output(refused)
    assert token_flags(host) == flags  # no failed login was counted
    assert site_state(host) == before


@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="the renewal stops before its login when a failed login is already counted")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_failed_login_already_counted_stops_the_renewal_before_it_logs_in(fresh_host):
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    before = site_state(host)  # (it logs in with the right PIN: before the failed login, which it would clear)
    host.run(f"PKCS11_USER_PIN=11112222 runuser -u {ADMIN} -- p11sak list-key all --slot {slot_of(host)}")
    flags = token_flags(host)
    assert int(flags, 16) & 0x10000, flags  # USER_PIN_COUNT_LOW
    refused = renew(host)
    assert refused.rc == 4, output(refused)
    assert refused.stderr.startswith(f"renew: not logged in: token IBMICATOK shows flags {flags}"), output(refused)
    assert token_flags(host) == flags
    assert site_state(host) == before


@pytest.mark.uses("daytwo/remove-old-token-key.sh")
@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="the renewal refuses a chain the site does not trust and installs nothing")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_chain_the_site_does_not_trust_is_not_installed(fresh_host):
    host = fresh_host
    serve_token(host)
    start_pebble(host, trust=False)
    before = site_state(host)
    refused = renew(host)
    assert refused.rc == 1, output(refused)
    assert "renew: the chain the CA sent does not verify against /etc/ssl/certs/ca-certificates.crt" \
        in refused.stderr, output(refused)
    assert site_state(host) == before


def served_by(host, sigalgs: str) -> str:
    """The certificate the site serves to a client that offers only sigalgs (TLS 1.3), as text."""
    return ok(host, f"openssl s_client -connect 127.0.0.1:443 -servername www.example.com -sigalgs {sigalgs}"
                    " </dev/null 2>/dev/null | openssl x509 -noout -text -fingerprint -sha256")


@pytest.mark.uses("daytwo/remove-old-token-key.sh", "daytwo/switch-token-certificate.sh",
                  "ihs/apache/create-token-key-and-csr.sh", "ihs/apache/apache-tls-pkcs11-ecdsa.conf")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_two_key_site_renews_each_pair_with_a_new_key_of_the_type_it_replaces(fresh_host):
    """The Apache page's two-key site (RSA and ECDSA, its step 7): one run renews both pairs. Each new key is made
    like the key it replaces (RSA 2048 stays RSA 2048, ECDSA P-256 stays ECDSA P-256), each certificate is
    Pebble's, and both old keys leave the token."""
    host = fresh_host
    serve_token_ecdsa(host)
    start_pebble(host)
    rsa_old, ec_old = served_by(host, "rsa_pss_rsae_sha256"), served_by(host, "ecdsa_secp256r1_sha256")
    assert token_labels(host) == ["apachekey", "apachekey-ec"]
    renewed = renew(host)
    assert renewed.rc == 0, output(renewed) + host.run(f"tail -20 {PEBBLE}/pebble.log").stdout
    print(f"\n{renewed.stdout}")
    rsa_new, ec_new = served_by(host, "rsa_pss_rsae_sha256"), served_by(host, "ecdsa_secp256r1_sha256")
    for old, new, kind in ((rsa_old, rsa_new, "Public-Key: (2048 bit)"), (ec_old, ec_new, "NIST CURVE: P-256")):
        assert new.split("Fingerprint=")[-1] != old.split("Fingerprint=")[-1]
        assert kind in new, new
        assert "Pebble Intermediate" in new, new
    labels = token_labels(host)
    assert len(labels) == 2, labels
    assert not {"apachekey", "apachekey-ec"} & set(labels), labels
    assert sum(label.startswith("apachekey-ec-") for label in labels) == 1, labels
    assert renewed.stdout.count("renew: www.example.com serves") == 2, renewed.stdout


@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="the argv trace sees a PIN passed on a command line")
@pytest.mark.snippet(RENEW, checker="testinfra")
def test_the_argv_trace_sees_a_pin_on_a_command_line_as_ps_would(fresh_host):
    """The negative case of the main check's trace: the form the renewal used to run its key check in
    (runuser ... env TOKEN_USER_PIN=PIN bash ...), run as root and as another user, is caught, and so is a child
    of a child; a PIN in the environment alone is not on a command line."""
    host = fresh_host
    pin = PINS["TOKEN_USER_PIN"]
    with traced(host) as execs:
        ok(host, f"runuser -u nobody -- env TOKEN_USER_PIN={pin} true")
        ok(host, f"bash -c 'sh -c \"echo --pin={pin} >/dev/null\"'")
        ok(host, f"TOKEN_USER_PIN={pin} runuser -u nobody -- sh -c 'test -n \"$TOKEN_USER_PIN\"'")
    caught = holding(execs, pin)
    assert {e.path.rsplit("/", 1)[-1] for e in caught} == {"env", "sh", "runuser", "bash"}, caught
    assert not any("test -n" in " ".join(e.args) for e in caught), caught


@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="a copy httpd's user cannot read, or a folder others can change, is refused first")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_snippets_the_token_administrator_cannot_read_or_others_can_change_are_refused_before_any_key(fresh_host):
    """Run from the bundle unpacked in root's download folder (0700), the renewal stops before it makes a key,
    because the token administrator runs the key check after the switch and cannot read it there (the walkthrough's
    M4, met then as www-data). Run from an installed bundle with a folder others can write, it stops too: root runs
    those files. So does a run through a link to the installed bundle from a folder another user owns: the checked
    path is the real one, and so is the one run. Nothing changes in any case: the site, its file, the token's
    keys."""
    host = fresh_host
    serve_token(host)
    before = site_state(host)
    bundle.copy_in(host, bundle.made())  # /root/dl, 0700, as a reader downloads into root's home
    ok(host, f"cd {bundle.DL} && tar xzf zrunbook-snippets.tar.gz")
    env = f"TOKEN_ADMIN={ADMIN} ACME_SERVER={ACME} TEXTFILE_DIR="
    unread = host.run(f"env {env} bash {bundle.DL}/zrunbook-snippets/{RENEW}")
    assert unread.rc == 1, output(unread)
    assert unread.stderr.startswith(f"renew: {ADMIN} cannot read {bundle.DL}/zrunbook-snippets/crypto/verify/"
                                    "check-key-in-token.sh"), output(unread)
    assert unread.stderr.rstrip().endswith("Nothing was changed."), output(unread)
    bundle.install(host)
    ok(host, f"chmod 0777 {bundle.installed('ihs/apache')}")
    opened = host.run(f"env {env} bash {bundle.installed(RENEW)}")
    assert opened.rc == 1, output(opened)
    assert opened.stderr.startswith(f"renew: {bundle.installed('ihs/apache')} can be changed by someone other than"
                                    " root"), output(opened)
    # a link to the bundle in a folder www-data owns: the run goes by the real path, which is root's alone (its
    # check passes the folders and stops at the open one above, named by its real path, not the link's)
    ok(host, "install -d -o www-data /tmp/web && ln -s /opt/zrunbook/snippets /tmp/web/snippets")
    linked = host.run(f"env {env} bash /tmp/web/snippets/{RENEW}")
    assert linked.rc == 1, output(linked)
    assert linked.stderr.startswith(f"renew: {bundle.installed('ihs/apache')} can be changed"), output(linked)
    assert site_state(host) == before



@pytest.mark.uses(*RENEWAL_STEPS, "monitor/zrunbook-alerts.yml")
@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="a check that fails after the switch ends with status 3, keeps both keys and holds "
                              "later runs")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_failed_check_after_the_switch_ends_with_status_3_and_keeps_both_keys(fresh_host, tmp_path):
    """The state the page's 'When a check after the switch fails' is about, made by replacing the installed bundle's
    key check with one that fails (root's bundle, changed by root, as a fault): the site serves the new certificate,
    the old key stays beside the new one, the run ends with 3, which the metrics carry and the alert reports."""
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    old = served_fingerprint(host)
    bundle.install(host)
    put(host, bundle.installed("crypto/verify/check-key-in-token.sh"),
        "echo 'check-key-in-token: (a fault for the test) the key is not in the token' >&2\nexit 1\n")
    failed = renew(host)
    assert failed.rc == 3, output(failed)
    assert "but its key check failed (above); the old key apachekey is kept." in failed.stderr, output(failed)
    assert served_fingerprint(host) != old
    labels = token_labels(host)
    assert OLD in labels, labels
    assert len(labels) == 2, labels
    metrics = renewal_metrics(host, tmp_path)
    assert metrics["zrunbook_certificate_renewal_last_exit_status"] == 3, metrics
    assert failing_alert_fires(tmp_path, metrics) == []
    print(f"\n{failed.stderr}")
    # the hold: a later run (the timer's, 12 hours on, when nothing is due) stops with 3 too, until a person removes it
    held = "/var/lib/zrunbook/renewal-held-www.example.com"
    assert "apachekey was kept." in ok(host, f"cat {held}")
    again = renew(host, "--when-due")
    assert again.rc == 3, output(again)
    assert again.stderr.startswith(f"renew: held by {held} since "), output(again)
    assert token_labels(host) == labels
    ok(host, f"rm {held}")
    released = renew(host, "--when-due")
    assert released.rc == 0, output(released)
    assert "is not due yet" in released.stdout, output(released)

@pytest.mark.negative("daytwo/install-snippet-bundle.sh",
                      expects="a bundle whose SHA-256 differs from its .sha256 is not installed")
@pytest.mark.snippet("daytwo/install-snippet-bundle.sh", checker="testinfra")
def test_the_install_step_refuses_a_changed_bundle_and_installs_nothing(fresh_host, tmp_path):
    """The install step as the page runs it: the good bundle is installed root's and readable by all, with no file
    another user can change; a bundle changed after its .sha256 was written (one byte) is refused and the
    installed one stays as it was; so is a run as another user."""
    host = fresh_host
    said = bundle.install(host)
    assert said.startswith("installed the snippet bundle (SHA-256 "), said
    assert ok(host, f"find {bundle.INSTALLED} ! -user root -o -perm /022 -print") == ""
    ok(host, f"runuser -u www-data -- test -r {bundle.installed(RENEW)}")
    listing = ok(host, f"cd {bundle.INSTALLED} && find . -type f -print0 | sort -z | xargs -0 sha256sum")
    bad = tmp_path / "zrunbook-snippets.tar.gz"
    data = bytearray(bundle.made().read_bytes())
    data[len(data) // 2] ^= 1
    bad.write_bytes(bytes(data))
    bad.with_name(f"{bad.name}.sha256").write_bytes(bundle.made().with_name(f"{bad.name}.sha256").read_bytes())
    bundle.copy_in(host, bad, bad.with_name(f"{bad.name}.sha256"))
    refused = host.run(f"cd {bundle.DL} && bash {snippet_path(bundle.STEP)} ./zrunbook-snippets.tar.gz")
    assert refused.rc == 1, output(refused)
    assert "does not have the SHA-256 in ./zrunbook-snippets.tar.gz.sha256" in refused.stderr, output(refused)
    assert ok(host, f"cd {bundle.INSTALLED} && find . -type f -print0 | sort -z | xargs -0 sha256sum") == listing
    ok(host, f"chmod 0755 {bundle.DL}")
    other = host.run(f"cd {bundle.DL} && runuser -u www-data -- bash {snippet_path(bundle.STEP)}")
    assert other.rc == 1, output(other)
    assert "run this as root" in other.stderr, output(other)


@pytest.mark.negative("daytwo/acme/renew-token-certificate.cron",
                      expects="cron's own PATH (/usr/bin:/bin) stops the run at its tools, and the metrics say so")
@pytest.mark.snippet(CRON, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_cron_line_without_its_path_fails_every_run_and_says_so(fresh_host):
    """The walkthrough's M5: without the cron file's PATH line, cron starts the job with PATH=/usr/bin:/bin, where
    pkcsconf and runuser are not; the run stops there every time. The metrics file then says 1, so the monitoring
    page's CertificateRenewalFailing fires (the check above feeds promtool such a file)."""
    host = fresh_host
    serve_token(host)
    install_bundle(host)
    cron.syslog(host)
    ran = cron.run_line(host, (SNIPPETS / CRON).read_text(encoding="utf-8"), PATH="/usr/bin:/bin")
    assert ran.rc == 0, output(ran)  # the line's status is logger's, as cron sees it: only the log and metrics tell
    assert "renew: pkcsconf is missing" in cron.logged(host, "is missing")
    metrics = ok(host, "cat /var/lib/prometheus/node-exporter/zrunbook-renewal-www.example.com.prom")
    assert 'zrunbook_certificate_renewal_last_exit_status{server_name="www.example.com"} 1' in metrics, metrics


def analyze(host, *units: str):
    return host.run(f"systemd-analyze verify {' '.join(units)} 2>&1")


@pytest.mark.negative("daytwo/acme/renew-token-certificate.service",
                      expects="systemd-analyze verify reports the bad setting")
@pytest.mark.snippet(SERVICE, TIMER, checker="systemd-analyze")
def test_the_timer_and_its_service_verify_with_systemd_analyze_and_a_bad_setting_does_not(fresh_host):
    """systemd 257's own check, on the units as the page installs them. It exits 0 on a setting it ignores (a
    value it cannot parse is a warning), so a clean verify is exit 0 and no output."""
    host = fresh_host
    install_bundle(host)
    ok(host, f"cp {snippet_path(SERVICE)} {snippet_path(TIMER)} /etc/systemd/system/")
    units = ("/etc/systemd/system/renew-token-certificate.service", "/etc/systemd/system/renew-token-certificate.timer")
    good = analyze(host, *units)
    assert good.rc == 0, output(good)
    assert good.stdout.strip() == "", output(good)
    # negatives: a value systemd ignores (the backoff would silently be gone), and a step that is not there
    ok(host, f"sed 's/^RestartSteps=4/RestartSteps=four/' {units[0]} >/tmp/steps.service")
    ignored = analyze(host, "/tmp/steps.service")
    assert "Failed to parse RestartSteps=four, ignoring" in ignored.stdout, output(ignored)
    ok(host, f"sed 's#^ExecStart=/bin/bash #ExecStart=/usr/local/bin/bash #' {units[0]} >/tmp/missing.service")
    missing = analyze(host, "/tmp/missing.service")
    assert missing.rc == 1, output(missing)
    assert "is not executable: No such file or directory" in missing.stdout, output(missing)



LOAD = "ihs/apache/check-cold-start.sh"
LOAD_CLIENTS, LOAD_EACH = 16, 50


@pytest.mark.uses("daytwo/remove-old-token-key.sh", "daytwo/switch-token-certificate.sh")
@pytest.mark.snippet(RENEW, LOAD, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.uses("ihs/apache/use-prefork-mpm-debian.sh")
def test_an_acme_renewal_under_load_with_prefork_loses_no_handshake(fresh_host):
    """The whole renewal (key, order, challenge, switch, checks, removal) while the Apache page's burst check runs
    again and again (LOAD_CLIENTS clients, LOAD_EACH new TLS connections each per round) until the renewal ends,
    trusting the old test CA and Pebble's root both, on the token site as the Apache page sets it up for first
    users (the prefork MPM). The check requires every handshake of every round to complete and prints the count.
    With the event MPM the graceful reload's new workers lost up to 9 of 3200 (their threads wait at most one
    second for the worker's token login: test_renew_token_certificate.py keeps that finding); prefork serves each
    connection in a process that made its own login first. No exclusive_cpu: no handshake waits on a time limit
    shorter than the burst check's 30 s per client."""
    host = fresh_host
    old_ca = serve_token(host)
    use_prefork(host)  # the Apache page's MPM step for a token site
    start_pebble(host)
    ok(host, f"cat {old_ca} {PEBBLE}/root.pem > /tmp/both-roots.pem")
    ok(host, "rm -f /tmp/load.*; setsid bash -c 'until test -e /tmp/load.stop; do CA_FILE=/tmp/both-roots.pem"
             f" CLIENTS={LOAD_CLIENTS} CONNECTIONS={LOAD_EACH} bash {snippet_path(LOAD)} www.example.com"
             " >>/tmp/load.out 2>&1; echo $? >>/tmp/load.rcs; done; touch /tmp/load.done' </dev/null >/dev/null 2>&1 &")
    for _ in range(100):
        if ok(host, "ss -Htn state established '( dport = :443 )' | wc -l").strip() != "0":
            break
        host.run("sleep 0.1")
    else:
        raise AssertionError("the load made no connection: " + host.run("cat /tmp/load.*").stdout)
    began = time.monotonic()
    renewed = renew(host)
    seconds = time.monotonic() - began
    ok(host, "touch /tmp/load.stop")
    assert renewed.rc == 0, output(renewed)
    for _ in range(600):
        if host.run("test -e /tmp/load.done").rc == 0:
            break
        host.run("sleep 0.5")
    load, rcs = ok(host, "cat /tmp/load.out"), ok(host, "cat /tmp/load.rcs").split()
    rounds = re.findall(r"^(\d+) of (\d+) new TLS connections completed", load, re.M)
    completed, opened = sum(int(a) for a, _ in rounds), sum(int(b) for _, b in rounds)
    print(f"\nACME renewal under load: {seconds:.1f} s; {len(rounds)} rounds, {completed} of {opened} handshakes")
    assert len(rounds) == len(rcs) >= 2, load
    assert opened == len(rounds) * LOAD_CLIENTS * LOAD_EACH, load
    lost = opened - completed
    print(f"handshakes lost during the renewal: {lost} of {opened}")
    assert lost == 0, load
    assert set(rcs) == {"0"}, load
    assert token_labels(host) != [OLD]


def aged_certificate(host, name: str, lifetime_days: int, age_seconds: int) -> str:
    """A certificate lifetime_days long whose notBefore lies age_seconds in the past, and a copy of the site file
    that names it (the renewal reads the served certificate's path from the site file)."""
    now = int(ok(host, "date +%s"))
    begin, end = now - age_seconds, now - age_seconds + lifetime_days * schedule.DAY
    stamp = [ok(host, f"date -u -d @{t} +%Y%m%d%H%M%SZ").strip() for t in (begin, end)]
    cert, conf = f"/tmp/aged-{name}.crt", f"/tmp/aged-{name}.conf"
    ok(host, f"openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -keyout /dev/null -out {cert}"
             f" -subj /CN=www.example.com -not_before {stamp[0]} -not_after {stamp[1]} 2>/dev/null")
    ok(host, f"sed -E 's#^([[:space:]]*SSLCertificateFile[[:space:]]+).*#\\1{cert}#' {SITE} > {conf}")
    return conf


@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="a certificate not yet at two thirds of its lifetime is not renewed and no login is made")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_renewal_is_due_at_two_thirds_of_the_certificate_s_own_lifetime_and_not_before(fresh_host):
    """--when-due with certificates of every lifetime in the lifetimes table, 10 minutes before and 10 minutes after
    the renewal point (two thirds: zrunbook/daytwo/renewal.py). The token has a failed login counted, so a run that
    gets as far as the token stops there with status 4 and a run that is not due must stop before it: not due
    leaves the flags as they were and never reaches the token. Pebble 2.6.0 offers ACME Renewal Information (its
    directory names renewalInfo); certbot 4.0.0's ACME library has no code for it, which is why the step decides by
    the certificate's own dates."""
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    directory = json.loads(ok(host, f"curl -sf --cacert {PEBBLE}/listener.crt {ACME}"))
    assert "renewalInfo" in directory, directory
    assert host.run("grep -rqil renewalinfo /usr/lib/python3/dist-packages/acme"
                    " /usr/lib/python3/dist-packages/certbot").rc == 1
    before = site_state(host)  # (it logs in with the right PIN: before the failed login, which it would clear)
    host.run(f"PKCS11_USER_PIN=11112222 runuser -u {ADMIN} -- p11sak list-key all --slot {slot_of(host)}")
    flags = token_flags(host)
    assert int(flags, 16) & 0x10000, flags  # USER_PIN_COUNT_LOW
    for row in schedule.lifetimes():
        lifetime = int(row[schedule.LIFETIME_COLUMN])
        due = schedule.renewal_seconds(lifetime)
        early = renew(host, "--when-due", SITE_CONF=aged_certificate(host, f"{lifetime}-early", lifetime, due - 600))
        assert early.rc == 0, output(early)
        assert "is not due yet: renewal from" in early.stdout, output(early)
        assert early.stderr == "", output(early)
        metrics = renewal_metrics(host)
        assert metrics["zrunbook_certificate_renewal_last_exit_status"] == 0, metrics
        now = int(ok(host, "date +%s"))
        assert now < metrics["zrunbook_certificate_renewal_due_timestamp_seconds"] <= now + 600, (lifetime, metrics)
        assert token_flags(host) == flags
        late = renew(host, "--when-due", SITE_CONF=aged_certificate(host, f"{lifetime}-late", lifetime, due + 600))
        assert late.rc == 4, output(late)
        assert late.stderr.startswith(f"renew: not logged in: token IBMICATOK shows flags {flags}"), output(late)
        assert renewal_metrics(host)["zrunbook_certificate_renewal_last_exit_status"] == 4
        assert token_flags(host) == flags
        print(f"\n{lifetime}-day certificate: not due at day {(due - 600) / schedule.DAY:.2f},"
              f" due at day {(due + 600) / schedule.DAY:.2f}")
    assert token_flags(host) == flags
    assert site_state(host)[:2] == before[:2]  # (the labels need a login, which would clear the count: last)
    assert site_state(host) == before


@pytest.mark.uses("daytwo/remove-old-token-key.sh", "daytwo/switch-token-certificate.sh", "monitor/zrunbook-alerts.yml")
@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="a read-only token store stops the renewal with a sentence; the old certificate serves")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_token_whose_store_is_read_only_stops_the_renewal_and_loses_nothing(fresh_host, tmp_path):
    """The soft token's object store (its TOK_OBJ folder, root:pkcs11 0770) made read-only for the token's users:
    openCryptoki 3.23 writes a new token object as a file there from the calling process (usr/lib/common/loadsave.c,
    save_token_object), so the key step's key generation fails. A full token (2048 private or public objects,
    MAX_TOK_OBJS in usr/lib/common/defs.h; obj_mgr.c answers CKR_HOST_MEMORY) stops at the same step; it is not
    filled here."""
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    store = ok(host, "ls -d /var/lib/opencryptoki/swtok/TOK_OBJ").strip()
    listing = ok(host, f"ls -la {store}")
    before = site_state(host)
    ok(host, f"chmod 0550 {store}")
    try:
        refused = renew(host)
    finally:
        ok(host, f"chmod 0770 {store}")
    assert refused.rc == 1, output(refused)
    assert "renew: the key step could not make a new rsa 2048 key in token IBMICATOK" in refused.stderr, output(refused)
    assert "the site still serves" in refused.stderr, output(refused)
    assert site_state(host) == before  # same certificate served, same site file, only the old key in the token
    assert ok(host, f"ls -la {store}") == listing  # the store is as it was: no object file half written
    assert host.run("ls /etc/letsencrypt/live 2>/dev/null | grep -q .").rc == 1
    metrics = renewal_metrics(host, tmp_path)
    assert metrics["zrunbook_certificate_renewal_last_exit_status"] == 1, metrics
    assert failing_alert_fires(tmp_path, metrics) == []
    # the token works again once its store is writable: the same renewal then succeeds
    again = renew(host)
    assert again.rc == 0, output(again)
    assert served_fingerprint(host) != before[0]
    print(f"\n{refused.stderr}")


FILL = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
slot, pin, most = int(sys.argv[2]), sys.argv[3].encode(), int(sys.argv[4])
ULONG = ctypes.c_ulong


class Attribute(ctypes.Structure):
    _fields_ = [("type", ULONG), ("value", ctypes.c_void_p), ("length", ULONG)]


def check(rv, what):
    if rv:
        sys.exit(f"{what}: 0x{rv:x}")


check(lib.C_Initialize(None), "C_Initialize")
session = ULONG()
check(lib.C_OpenSession(ULONG(slot), ULONG(0x6), None, None, ctypes.byref(session)), "C_OpenSession")
check(lib.C_Login(session, ULONG(1), pin, ULONG(len(pin))), "C_Login")
data, yes, no = ULONG(0), ctypes.c_ubyte(1), ctypes.c_ubyte(0)  # CKO_DATA, CK_TRUE, CK_FALSE
made, rv = 0, 0
while made < most:
    label = ctypes.create_string_buffer(f"filler-{made}".encode())
    template = (Attribute * 4)(Attribute(0, ctypes.addressof(data), ctypes.sizeof(data)),  # CKA_CLASS
                               Attribute(1, ctypes.addressof(yes), 1),  # CKA_TOKEN
                               Attribute(2, ctypes.addressof(no), 1),  # CKA_PRIVATE: a public object
                               Attribute(3, ctypes.addressof(label), len(label.value)))  # CKA_LABEL
    handle = ULONG()
    rv = lib.C_CreateObject(session, template, ULONG(4), ctypes.byref(handle))
    if rv:
        break
    made += 1
print(made, f"0x{rv:x}")
lib.C_Logout(session)
lib.C_Finalize(None)
"""


@pytest.mark.uses("daytwo/remove-old-token-key.sh")
@pytest.mark.negative("daytwo/acme/renew-token-certificate-acme.sh",
                      expects="a full token stops the renewal at the key step and the old certificate keeps serving")
@pytest.mark.snippet(RENEW, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_full_token_stops_the_renewal_and_loses_nothing(fresh_host, tmp_path):
    """The token filled with public data objects through openCryptoki's own library (C_CreateObject, as the token
    administrator) until it refuses one: openCryptoki 3.23 keeps at most MAX_TOK_OBJS (2048) public token objects
    (usr/lib/common/defs.h) and answers CKR_HOST_MEMORY (0x2) past it (obj_mgr.c). The new key's public half then
    has no room, the key step fails, and the renewal stops with the old certificate serving."""
    host = fresh_host
    serve_token(host)
    start_pebble(host)
    before = site_state(host)
    put(host, "/tmp/zr-fill.py", FILL)
    lib = ok(host, "ls /usr/lib/$(uname -m)-linux-gnu/pkcs11/libopencryptoki.so").strip()
    filled = ok(host, f"runuser -u {ADMIN} -- python3 /tmp/zr-fill.py {lib} {slot_of(host)}"
                      f" {PINS['TOKEN_USER_PIN']} 4096").split()
    assert filled[1] == "0x2", filled  # CKR_HOST_MEMORY: the token is full
    print(f"\nthe token took {filled[0]} public data objects, then answered CKR_HOST_MEMORY")
    refused = renew(host)
    assert refused.rc == 1, output(refused)
    assert "renew: the key step could not make a new rsa 2048 key in token IBMICATOK" in refused.stderr, output(refused)
    assert "the site still serves" in refused.stderr, output(refused)
    assert site_state(host) == before  # same certificate served, same site file, only the old key in the token
    metrics = renewal_metrics(host, tmp_path)
    assert metrics["zrunbook_certificate_renewal_last_exit_status"] == 1, metrics
    print(refused.stderr)


# --- the timer and the service under a booted systemd ---------------------------------------------------------------



@pytest.fixture(params=["debian13-amd64"], ids=str)
def booted_host(request, zr_host_pool):
    with booted(zr_host_pool, request.param) as host:
        yield host




@pytest.mark.uses(*RENEWAL_STEPS)
@pytest.mark.negative("daytwo/acme/renew-token-certificate.service",
                      expects="a failed renewal is retried after 15 minutes, a doubtful PIN (exit 4) is not retried")
@pytest.mark.negative("daytwo/acme/renew-token-certificate.timer",
                      expects="the timer's start falls in its window; the service it starts retries a failure")
@pytest.mark.snippet(RENEW, SERVICE, TIMER, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_under_a_booted_systemd_the_timer_waits_for_its_window_and_the_service_retries_renews_or_stops(booted_host):
    """The page's units installed and enabled as the page says, on a host booted with systemd 257. The timer's next
    start falls in one of its two windows (03:00 or 15:00, plus up to an hour). With the served certificate made
    due (61 days into 90): the service fails while the CA is down, keeps the old certificate serving, and systemd
    schedules the retry after RestartSec (15 min); with the CA up it renews end to end as the unit runs it (the
    environment file, no terminal) and the new certificate from the CA serves; with a failed login counted it stops
    with exit status 4, which systemd does not retry, and the token's flags stay as they were."""
    host = booted_host
    serve_token(host)
    assert ok(host, "systemctl is-active apache2").strip() == "active"  # the site step's httpd is systemd's unit
    install_bundle(host)
    ok(host, f"cp {snippet_path(SERVICE)} {snippet_path(TIMER)} /etc/systemd/system/ && systemctl daemon-reload")
    ok(host, "systemctl enable --now renew-token-certificate.timer")  # the page's command
    timer = ok(host, "systemctl show -P NextElapseUSecRealtime renew-token-certificate.timer").strip()
    hour = int(re.search(r" (\d\d):\d\d:\d\d ", timer).group(1))
    print(f"\nthe timer's next start: {timer}")
    assert hour in (3, 15), timer

    age_served_certificate(host, 90, 61)
    old = served_fingerprint(host)
    failed = host.run(f"systemctl start {UNIT}")  # the CA is not running yet
    assert failed.rc != 0, output(failed)
    state = unit_state(host)
    print(f"the CA down: {state}")
    assert (state["ActiveState"], state["SubState"], state["ExecMainStatus"]) == ("activating", "auto-restart", "1")
    assert state["RestartUSecNext"] == "15min", state  # the first of the backoff's steps
    assert served_fingerprint(host) == old
    assert token_labels(host) == [OLD]
    metrics = ok(host, "cat /var/lib/prometheus/node-exporter/zrunbook-renewal-www.example.com.prom")
    assert 'zrunbook_certificate_renewal_last_exit_status{server_name="www.example.com"} 1' in metrics, metrics

    ok(host, f"systemctl stop {UNIT}")  # the pending retry cancelled; the CA comes up and the service runs again
    start_pebble(host)
    renewed = host.run(f"systemctl start {UNIT}")
    journal = ok(host, f"journalctl -u {UNIT} --no-pager -o cat")
    assert renewed.rc == 0, output(renewed) + journal
    state = unit_state(host)
    assert (state["ActiveState"], state["Result"]) == ("inactive", "success"), state
    assert "renew: www.example.com serves" in journal, journal
    new = served_fingerprint(host)
    assert new != old
    labels = token_labels(host)
    assert OLD not in labels, labels
    assert len(labels) == 1, labels
    new_cert = ok(host, f"sed -n -E 's/^[[:space:]]*SSLCertificateFile[[:space:]]+//p' {SITE}").strip()
    ok(host, f"openssl verify -no-CApath -no-CAstore -CAfile {PEBBLE}/root.pem -untrusted {new_cert} {new_cert}")
    metrics = ok(host, "cat /var/lib/prometheus/node-exporter/zrunbook-renewal-www.example.com.prom")
    assert 'zrunbook_certificate_renewal_last_exit_status{server_name="www.example.com"} 0' in metrics, metrics

    # a failed login counted: the run that is due stops before it logs in, with status 4, and is not retried
    ok(host, f"printf 'SITE_CONF=%s\\n' {aged_certificate(host, 'exit4', 90, 61 * schedule.DAY)} >> {ENV_FILE}")
    host.run(f"PKCS11_USER_PIN=11112222 runuser -u {ADMIN} -- p11sak list-key all --slot {slot_of(host)}")
    flags = token_flags(host)
    assert int(flags, 16) & 0x10000, flags  # USER_PIN_COUNT_LOW
    stopped = host.run(f"systemctl start {UNIT}")
    assert stopped.rc != 0, output(stopped)
    state = unit_state(host)
    print(f"a failed login counted: {state}")
    assert (state["ActiveState"], state["SubState"], state["ExecMainStatus"]) == ("failed", "failed", "4"), state
    assert state["NRestarts"] == "0", state
    assert token_flags(host) == flags
    assert served_fingerprint(host) == new
