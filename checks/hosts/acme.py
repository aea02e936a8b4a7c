"""Pebble, Let's Encrypt's ACME test server (Debian's package, in the amd64 host's image), as a test host's CA: it runs
inside the container with a root of its own and validates HTTP-01 against the container's own port 80, where
www.example.com resolves to. Used by the day-two ACME renewal checks and the IHS chapter's GSKit renewal."""

import json

from checks.hosts.apache import put
from checks.hosts.util import ok

PEBBLE = "/root/pebble"
ACME = "https://localhost:14000/dir"
LIFETIME = 47 * 86400  # Pebble issues for 47 days: the longest lifetime from 15 March 2029 (SC-081v3)
PEBBLE_CONFIG = {"pebble": {
    "listenAddress": "127.0.0.1:14000", "managementListenAddress": "127.0.0.1:15000",
    "certificate": f"{PEBBLE}/listener.crt", "privateKey": f"{PEBBLE}/listener.key",
    "httpPort": 80, "tlsPort": 443, "ocspResponderURL": "", "externalAccountBindingRequired": False,
    "certificateValidityPeriod": LIFETIME}}


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
