"""Pebble, Let's Encrypt's ACME test server (Debian's package, in the amd64 host's image), as a test host's CA: it runs
inside the container with a root of its own and validates HTTP-01 against the container's own port 80, where
www.example.com resolves to. Used by the day-two ACME renewal checks and the IHS chapter's GSKit renewal."""

import contextlib
import json
import re

from checks.hosts import bundle
from checks.hosts.apache import CA, TOKEN_KEY, put
from checks.hosts.token import ADMIN, PINS, slot_of
from checks.hosts.util import ok
from zrunbook.daytwo import renewal as schedule

PEBBLE = "/root/pebble"
ACME = "https://localhost:14000/dir"
LIFETIME = 47 * 86400  # Pebble issues for 47 days: the longest lifetime from 15 March 2029 (SC-081v3)
PEBBLE_CONFIG = {"pebble": {
    "listenAddress": "127.0.0.1:14000", "managementListenAddress": "127.0.0.1:15000",
    "certificate": f"{PEBBLE}/listener.crt", "privateKey": f"{PEBBLE}/listener.key",
    "httpPort": 80, "tlsPort": 443, "ocspResponderURL": "", "externalAccountBindingRequired": False,
    "certificateValidityPeriod": LIFETIME}}
# The renewal page's unattended run: its environment file and its unit
ENV_FILE = "/etc/zrunbook/renew-token-certificate.env"
UNIT = "renew-token-certificate.service"
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"  # as Debian's prometheus-node-exporter package makes it
# the runbook's steps the renewal runs on its way (its key step, the switch, the checks, the removal)
RENEWAL_STEPS = ("daytwo/remove-old-token-key.sh", "daytwo/switch-token-certificate.sh",
                 "crypto/verify/check-key-in-token.sh", "crypto/verify/check-token-signs.sh",
                 "ihs/apache/create-token-key-and-csr.sh")


def start_pebble(host, trust: bool = True, site: bool = True) -> None:
    """Pebble on 127.0.0.1:14000 with a listener certificate of its own; its root in the system's trust store (when
    trust) and at PEBBLE/root.pem. With site, the running site is asked to answer on port 80 first."""
    ok(host, "grep -q ' www.example.com$' /etc/hosts || echo '127.0.0.1 www.example.com' >> /etc/hosts")
    ok(host, f"install -d -m 0700 {PEBBLE} && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc"
             f" -keyout {PEBBLE}/listener.key -out {PEBBLE}/listener.crt -days 2 -subj /CN=localhost"
             " -addext subjectAltName=DNS:localhost,IP:127.0.0.1 2>/dev/null")
    put(host, f"{PEBBLE}/config.json", json.dumps(PEBBLE_CONFIG))
    ok(host, f"cd {PEBBLE} && setsid env PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 PEBBLE_AUTHZREUSE=0"
             f" pebble -config {PEBBLE}/config.json >{PEBBLE}/pebble.log 2>&1 </dev/null &")
    for _ in range(100):
        if host.run("ss -Hltn 'sport = :14000' | grep -q 14000").rc == 0:
            break
        host.run("sleep 0.1")
    else:
        raise AssertionError("Pebble did not listen:\n" + host.run(f"cat {PEBBLE}/pebble.log").stdout)
    if site:  # the site answers HTTP-01 on port 80 from Debian's default document root
        ok(host, "curl -sf -o /dev/null http://www.example.com/")
    ok(host, f"curl -sf --cacert {PEBBLE}/listener.crt https://localhost:15000/roots/0 -o {PEBBLE}/root.pem")
    if trust:
        ok(host, f"cp {PEBBLE}/root.pem /usr/local/share/ca-certificates/pebble-test-root.crt"
                 " && update-ca-certificates >/dev/null 2>&1")


def order_with_csr(host, csr: str, folder: str):
    """certbot certonly --csr against Pebble, answering HTTP-01 itself on port 80 (--standalone: for servers that do
    not own port 80 here); the certificate, chain and full chain land in folder as cert.pem, chain.pem, full.pem."""
    return host.run(f"REQUESTS_CA_BUNDLE={PEBBLE}/listener.crt certbot certonly --non-interactive --agree-tos"
                    f" --register-unsafely-without-email --server {ACME} --csr {csr} --standalone"
                    f" --cert-path {folder}/cert.pem --chain-path {folder}/chain.pem"
                    f" --fullchain-path {folder}/full.pem")


def install_bundle(host) -> None:
    """The snippets where the units and the cron line expect them (the bundle installed by the page's step as
    /opt/zrunbook/snippets), and the environment file they read, for this test's Pebble."""
    if host.run(f"test -f {bundle.installed('MANIFEST.json')}").rc != 0:
        bundle.install(host)
    ok(host, f"install -d -m 0755 /etc/zrunbook {TEXTFILE_DIR}")
    put(host, ENV_FILE, f"ACME_SERVER={ACME}\nACME_CA_BUNDLE={PEBBLE}/listener.crt\nTOKEN_ADMIN={ADMIN}\n")
    ok(host, f"chmod 0600 {ENV_FILE}")


def served_fingerprint(host) -> str:
    return host.run("openssl s_client -connect 127.0.0.1:443 -servername www.example.com </dev/null 2>/dev/null"
                    " | openssl x509 -noout -fingerprint -sha256").stdout.strip()


def token_labels(host) -> list[str]:
    listed = ok(host, f"PKCS11_USER_PIN={PINS['TOKEN_USER_PIN']} p11sak list-key all --slot {slot_of(host)}")
    return sorted(set(re.findall(r'"(apachekey[^"]*)"', listed)))


def token_flags(host) -> str:
    return re.search(r"Flags:\s*(0x[0-9A-Fa-f]+)", ok(host, f"pkcsconf -t -c {slot_of(host)}")).group(1)


def unit_state(host, unit: str = UNIT) -> dict[str, str]:
    props = "ActiveState,SubState,Result,NRestarts,ExecMainStatus,RestartUSecNext"
    return dict(line.split("=", 1) for line in ok(host, f"systemctl show -p {props} {unit}").splitlines())


def age_served_certificate(host, lifetime_days: int, age_days: int) -> None:
    """The served certificate signed again by the site's test CA with the same key and subject, lifetime_days long
    and age_days old, and httpd reloaded: the served certificate is then due or not by its own dates."""
    now = int(ok(host, "date +%s"))
    begin, end = now - age_days * schedule.DAY, now - (age_days - lifetime_days) * schedule.DAY
    stamp = [ok(host, f"date -u -d @{t} +%Y%m%d%H%M%SZ").strip() for t in (begin, end)]
    served = ok(host, "sed -n -E 's/^[[:space:]]*SSLCertificateFile[[:space:]]+//p'"
                      " /etc/apache2/sites-available/tls.conf").split()[0]
    ok(host, f"openssl x509 -in {served} -CA {CA}/ca.crt -CAkey {CA}/ca.key -set_serial 4242"
             f" -not_before {stamp[0]} -not_after {stamp[1]} -out /tmp/aged.crt && cp /tmp/aged.crt {served}"
             " && systemctl reload apache2")
    assert served_fingerprint(host) == ok(host, f"openssl x509 -in {served} -noout -fingerprint -sha256").strip()


@contextlib.contextmanager
def booted(zr_host_pool, name: str):
    """A host from the TOKEN_KEY state with systemd as its first process (booted: pkcsslotd and Apache are systemd's
    units, and Debian's apachectl hands start and stop to systemctl), as on a reader's server; removed after."""
    host = zr_host_pool.start(name, state=TOKEN_KEY, boot=True)
    try:
        yield host
    finally:
        zr_host_pool.remove(host)
