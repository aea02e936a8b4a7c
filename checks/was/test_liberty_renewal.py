"""Day two on Liberty: renewing the certificate of a server whose key is in the token (docs/how-to/day-two.md).

Run for real on Open Liberty (checks/was/conftest.py ``running``: the Liberty page's server, key ``was-server`` in the
token with a test-CA certificate). The renewal as the page runs it: a new key pair generated in the token under a
new alias (the WAS page's generate-token-key.sh), its request signed by the CA and the reply imported with keytool,
then snippets/daytwo/liberty-token-key.sh switch (stop, serverKeyAlias, start) while a load of new TLS connections
runs against port 9443 (LOAD_SCRIPT), and the same script's remove-old.

Outcome: the server presents the new certificate, check-key-in-token.sh passes for it, the old key is gone from the
token; every connection of the load that failed was refused while the server was down or cut in its handshake
when it stopped (none failed for a wrong or missing key), and the counts are printed: on one server the switch is
an outage of one restart. Negatives: the switch refuses a key that still carries its self-signed certificate
before touching the server; keytool refuses a CA reply for another key ("Certificate reply does not contain public
key"); the removal refuses while server.xml names no other alias, or names this one. The finding that makes the
restart necessary: editing server.xml while the server runs (Liberty applies it at once) leaves the HTTPS port
without a key, CWPKI0024E, until a restart.

Only on amd64, as test_liberty.py.
"""

from __future__ import annotations

import re
import time

import pytest

from checks.hosts import liberty
from checks.hosts.acme import PEBBLE, order_with_csr, start_pebble
from checks.hosts.apache import put
from checks.hosts.steps import snippet_path
from checks.hosts.token import PINS, slot_of
from checks.hosts.util import ok, output
from zrunbook.ihs import values as ihs_values

STEP = "daytwo/liberty-token-key.sh"
GENERATE = "was/pkcs11/generate-token-key.sh"
START = "was/liberty/start-server.sh"
IN_TOKEN = "crypto/verify/check-key-in-token.sh"
OLD, NEW = "was-server", "was-server-2"
LOAD_CLIENTS, LOAD_EACH = 4, 150
XML = f"{liberty.SERVER_DIR}/server.xml"
AS_WAS = f"cd /tmp && runuser -u wasadmin -- env {liberty.ENV} TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']}"
SUN = ("KEYTOOL=keytool STORETYPE=PKCS11 PROVIDER_CLASS=sun.security.pkcs11.SunPKCS11 "
       f"PROVIDER_NAME=SunPKCS11-IBMICATOK JAVA_TOOL_OPTIONS=-Djava.security.properties={liberty.PROVIDERS}")
# The load: LOAD_CLIENTS clients at once, LOAD_EACH new TLS connections each (full handshakes, the CA verified), a
# line per connection: "ok", or "failed: " and openssl's first error line. /tmp/load/done marks the end.
LOAD_SCRIPT = f"""#!/bin/bash
client() {{{{
  for ((i = 0; i < {LOAD_EACH}; i++)); do
    if out=$(timeout 30 openssl s_client -connect localhost:9443 -CAfile {{ca}} -verify_return_error -brief \\
             </dev/null 2>&1)
    then echo ok; else echo "failed: $(grep -m 1 -i error <<<"$out" || tr '\\n' ' ' <<<"$out")"; fi
  done
}}}}
for ((c = 1; c <= {LOAD_CLIENTS}; c++)); do client > /tmp/load/$c & done
wait
touch /tmp/load/done
"""
SERVED = "openssl s_client -connect localhost:9443 </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256"


def new_key(host) -> None:
    ok(host, f"mkdir -p /tmp/liberty/req && chown wasadmin /tmp/liberty/req && "
             f"{AS_WAS} {SUN} bash {snippet_path(GENERATE)} {NEW} localhost /tmp/liberty/req/{NEW}.pem")


def ca_reply(host, alias: str = NEW, csr_of: str = NEW):
    """The CA signs the request made with ``csr_of`` and the reply is imported onto ``alias``."""
    ok(host, f"cd /tmp && runuser -u wasadmin -- {liberty.KEYTOOL} -certreq -alias {csr_of} "
             f"-file /tmp/liberty/req/{csr_of}.csr")
    ok(host, f"cd {liberty.CA} && openssl x509 -req -in /tmp/liberty/req/{csr_of}.csr -CA ca.pem -CAkey ca.key "
             f"-CAcreateserial -days 90 -extfile leaf.ext -out {csr_of}.pem 2>/dev/null && "
             f"cat {csr_of}.pem ca.pem > {csr_of}-chain.pem && chmod a+r {csr_of}-chain.pem")
    return host.run(f"cd /tmp && runuser -u wasadmin -- {liberty.KEYTOOL} -importcert -noprompt -alias {alias} "
                    f"-file {liberty.CA}/{csr_of}-chain.pem")


def fingerprint(host, pem: str) -> str:
    return ok(host, f"openssl x509 -in {pem} -noout -fingerprint -sha256").strip()


def switch(host):
    return host.run(f"{AS_WAS} START_SERVER={snippet_path(START)} bash {snippet_path(STEP)} switch "
                    f"{liberty.SERVER} {NEW}")


def remove(host, alias: str = OLD):
    return host.run(f"{AS_WAS} bash {snippet_path(STEP)} remove-old {liberty.SERVER} {alias}")


def aliases(host) -> str:
    return ok(host, f"cd /tmp && runuser -u wasadmin -- {liberty.KEYTOOL} -list")


@pytest.mark.uses("was/liberty/jvm.options", "was/liberty/liberty-pkcs11.security", "was/liberty/server.xml")
@pytest.mark.snippet(STEP, checker="open-liberty")
@pytest.mark.snippet(GENERATE, START, IN_TOKEN, checker="open-liberty")
def test_renewal_switches_liberty_to_the_new_token_key_with_a_restart(running):
    host, ca, _ = running
    old = ok(host, SERVED).strip()
    new_key(host)

    early = switch(host)  # negative: the new key still carries its self-signed certificate
    assert early.rc == 1, output(early)
    assert "still carries its self-signed certificate" in early.stderr
    assert "server was not touched" in early.stderr
    assert ok(host, SERVED).strip() == old
    assert "serverKeyAlias" not in host.file(XML).content_string

    other = ca_reply(host, alias=NEW, csr_of=OLD)  # negative: a CA reply for another key
    assert other.rc != 0
    assert f"Certificate reply does not contain public key for <{NEW}>" in output(other), output(other)
    refused = remove(host)  # negative: server.xml does not name another alias yet
    assert refused.rc == 1, output(refused)
    assert "names no serverKeyAlias" in refused.stderr

    imported = ca_reply(host)
    assert imported.rc == 0, output(imported)
    want = fingerprint(host, f"{liberty.CA}/{NEW}.pem")

    put(host, "/tmp/load.sh", LOAD_SCRIPT.format(ca=ca))
    ok(host, "rm -rf /tmp/load; mkdir /tmp/load; setsid bash /tmp/load.sh </dev/null >/dev/null 2>&1 &")
    for _ in range(100):  # the switch starts once the load's connections reach the server
        if ok(host, "cat /tmp/load/* 2>/dev/null | wc -l").strip() != "0":
            break
        time.sleep(0.1)
    t0 = time.monotonic()
    switched = switch(host)
    seconds = time.monotonic() - t0
    assert switched.rc == 0, output(switched)
    assert f"presents '{NEW}' from the token: {want}" in switched.stdout
    ok(host, "for i in $(seq 600); do test -e /tmp/load/done && exit 0; sleep 0.2; done; exit 1")
    lines = ok(host, "cat /tmp/load/[0-9]*").splitlines()
    failed = [line for line in lines if line.startswith("failed")]
    refused = [line for line in failed if "Connection refused" in line]
    cut = [line for line in failed if re.search(r"unexpected eof while reading|Connection reset|errno=104", line)]
    print(f"Liberty switch in {seconds:.1f} s under a load of {LOAD_CLIENTS} x {LOAD_EACH} new TLS connections: "
          f"{len(refused)} refused while the server was down, {len(cut)} cut in their handshake when it stopped, "
          f"{len(lines) - len(failed)} completed")
    assert len(lines) == LOAD_CLIENTS * LOAD_EACH
    assert len(refused) + len(cut) == len(failed), [line for line in failed if line not in refused + cut][:3]

    assert ok(host, SERVED).strip() == want
    in_token = host.run(f"runuser -u wasadmin -- env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot_of(host)} "
                        f"bash {snippet_path(IN_TOKEN)} localhost:9443")
    assert in_token.rc == 0, output(in_token)
    assert "private, sensitive, never extractable, generated in the token" in in_token.stdout

    kept = remove(host, NEW)  # negative: the alias server.xml names stays
    assert kept.rc == 1, output(kept)
    assert f"still names '{NEW}'" in kept.stderr
    gone = remove(host)
    assert gone.rc == 0, output(gone)
    listed = aliases(host)
    assert re.search(rf"^{NEW},.*PrivateKeyEntry", listed, re.M), listed
    assert not re.search(rf"^{OLD},", listed, re.M), listed


@pytest.mark.uses("was/liberty/jvm.options", "was/liberty/liberty-pkcs11.security", "was/liberty/server.xml",
                  "was/pkcs11/generate-token-key.sh")
@pytest.mark.negative("daytwo/liberty-token-key.sh",
                      expects="editing server.xml while Liberty runs closes the port until a restart")
@pytest.mark.snippet(STEP, START, checker="open-liberty")
def test_editing_server_xml_while_liberty_runs_closes_the_port_until_a_restart(running):
    """Why the switch restarts: Liberty applies a changed serverKeyAlias at once, but reads the PKCS #11 keystore
    only when the server starts, so the new alias is not found and the HTTPS port stops answering."""
    host, _ca, _ = running
    new_key(host)
    assert ca_reply(host).rc == 0
    ok(host, f"sed -i 's/<ssl id=\"defaultSSLConfig\"/& serverKeyAlias=\"{NEW}\"/' {XML}")
    updated = host.run(f"for i in $(seq 60); do grep -q CWWKG0017I {liberty.LOG} && exit 0; sleep 0.5; done; exit 1")
    assert updated.rc == 0, host.run(f"tail -20 {liberty.LOG}").stdout
    # a client tries (the log names the alias only when a handshake asks for the key)
    logged = host.run(f"for i in $(seq 60); do {SERVED} >/dev/null; grep -q CWPKI0024E {liberty.LOG} && exit 0; "
                      "sleep 0.5; done; exit 1")
    assert logged.rc == 0, host.run(f"tail -20 {liberty.LOG}").stdout
    assert f"The {NEW} certificate alias specified by the attribute serverKeyAlias is either not found" in \
        host.file(liberty.LOG).content_string
    assert host.run(SERVED).stdout.strip() == "", "a certificate was served after the dynamic update"
    liberty.stop(host)
    assert liberty.start(host).rc == 0
    assert ok(host, SERVED).strip() == fingerprint(host, f"{liberty.CA}/{NEW}.pem")


@pytest.mark.uses("was/liberty/jvm.options", "was/liberty/liberty-pkcs11.security", "was/liberty/server.xml")
@pytest.mark.negative("daytwo/liberty-token-key.sh",
                      expects="the CA refuses keytool's request without -ext; with it, the switch serves the CA's "
                              "certificate")
@pytest.mark.snippet(STEP, GENERATE, START, IN_TOKEN, checker="open-liberty")
def test_an_acme_ca_issues_for_a_new_liberty_token_key_and_the_switch_serves_it(running):
    """The Liberty path of the automatic renewal page, by hand: a new key in the token (the WAS page's
    generate-token-key.sh), its request from keytool with the server's name as a subjectAltName, certbot --csr
    against Pebble (HTTP-01 answered by certbot itself on port 80: Liberty's ports are 9080 and 9443), the issued
    chain with Pebble's root imported onto the new alias, then the day-two switch with its restart. The server then
    presents the certificate Pebble issued, which verifies against Pebble's root alone, with its key in the token.
    Negative: the request keytool makes without -ext names the server only in its subject, and Pebble refuses it."""
    host, _ca, _ = running
    start_pebble(host, trust=False, site=False)
    old = ok(host, SERVED).strip()
    ok(host, f"mkdir -p /tmp/liberty/req && chown wasadmin /tmp/liberty/req && "
             f"{AS_WAS} {SUN} bash {snippet_path(GENERATE)} {NEW} www.example.com /tmp/liberty/req/{NEW}.pem")

    # negative: keytool's request without -ext carries no subjectAltName (the key's self-signed one does), and the
    # CA refuses it as it refuses GSKit's (zrunbook/ihs/values.py)
    ok(host, f"cd /tmp && runuser -u wasadmin -- {liberty.KEYTOOL} -certreq -alias {NEW} -file /tmp/liberty/req/cn.csr")
    assert "Subject Alternative Name" not in ok(host, "openssl req -in /tmp/liberty/req/cn.csr -noout -text")
    refused = order_with_csr(host, "/tmp/liberty/req/cn.csr", "/tmp/liberty/acme")
    assert refused.rc == 1, output(refused)
    assert ihs_values.ACME_REFUSES_CN_ONLY in refused.stderr, output(refused)
    ok(host, f"cd /tmp && runuser -u wasadmin -- {liberty.KEYTOOL} -certreq -alias {NEW} -ext san=dns:www.example.com"
             f" -file /tmp/liberty/req/{NEW}.csr")
    issued = order_with_csr(host, f"/tmp/liberty/req/{NEW}.csr", "/tmp/liberty/acme")
    assert issued.rc == 0, output(issued)
    ok(host, f"cat /tmp/liberty/acme/full.pem {PEBBLE}/root.pem > /tmp/liberty/acme-reply.pem"
             " && chmod a+r /tmp/liberty/acme-reply.pem")
    imported = host.run(f"cd /tmp && runuser -u wasadmin -- {liberty.KEYTOOL} -importcert -noprompt -alias {NEW} "
                        "-file /tmp/liberty/acme-reply.pem")
    assert imported.rc == 0, output(imported)
    want = fingerprint(host, "/tmp/liberty/acme/cert.pem")
    t0 = time.monotonic()
    switched = switch(host)
    print(f"\nLiberty switch to the ACME certificate: {time.monotonic() - t0:.1f} s (one restart)")
    assert switched.rc == 0, output(switched)
    served = ok(host, SERVED).strip()
    assert served == want
    assert served != old
    verified = host.run(f"openssl s_client -connect localhost:9443 -CAfile {PEBBLE}/root.pem -verify_return_error"
                        " -brief </dev/null 2>&1")
    assert verified.rc == 0, output(verified)
    in_token = host.run(f"runuser -u wasadmin -- env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot_of(host)} "
                        f"bash {snippet_path(IN_TOKEN)} localhost:9443")
    assert in_token.rc == 0, output(in_token)
