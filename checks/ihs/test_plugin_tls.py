"""The web server plug-in's TLS leg from IBM HTTP Server to WebSphere, with IBM's GSKit as the client: the page's
plugin-cfg.xml <Transport> fragment (snippets/ihs/plugin/plugin-cfg-transport.xml), mapped to GSKit attributes by
checks/standins/ihs/plugin_transport.py and used by gskconnect (a small client on GSKit 8.0.60.5's SSL API from PyPI's
ibm_db wheel) on the amd64 host, against the WAS chapter's stand-in for WebSphere's HTTPS transport
(checks/standins/was/TokenHttpsServer.java: OpenJDK 21, its key generated in the openCryptoki soft token, the protocols
and suites of set-ssl-config-current.py; checks/hosts/jsse.py) and against real Open Liberty with the WAS chapter's
server.xml (checks/hosts/liberty.py), its token key's certificate signed by a test CA.

What is GSKit's own here: the handshakes, validating the server's certificate with the signer in the key database,
opening the key database with its stash (both written by GSKit's key management library, libgsk8km_64), and whether a
later connection resumes a session. What stands in: gskconnect for IBM's plug-in (its binary is not available here;
only its TLS leg is checked, not its routing, pooling or retries), the Java server for WebSphere, the key database made
by libgsk8km_64 for gskcapicmd (not in the wheel; the page's gskcapicmd step is labelled "not run here"), and
was1.example.com resolved to the container's own address in /etc/hosts. The session reuse counts are measured facts
about GSKit 8.0.60.5 and OpenJDK 21 asserted as recorded (facts/ihs/plugin-tls.csv), not claims about the plug-in.
"""

from __future__ import annotations

import statistics

import pytest

from checks.hosts import liberty
from checks.hosts.jsse import AS_WAS, KEYSTORE_PASSWORD, VERIFY_KEY, current_suites, start_server
from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.token import PINS, slot_of
from checks.hosts.util import output
from checks.standins.ihs import gskit_server, plugin_transport
from zrunbook import SNIPPETS, clidriver

FRAGMENT = "ihs/plugin/plugin-cfg-transport.xml"
IN_TOKEN = "crypto/verify/check-key-in-token.sh"
KDB_PW = "zr-plugin-kdb"  # test data only
ROUNDS = 3  # separate runs of CONNECTIONS each, for the resumption count
CONNECTIONS = 10
JAVA_NAMES = {"TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"}


def fragment() -> plugin_transport.Transport:
    return plugin_transport.transport((SNIPPETS / FRAGMENT).read_text(encoding="utf-8"))


# --- no host: the mapping -------------------------------------------------------------------------------------------


@pytest.mark.uses("ihs/plugin/plugin-cfg-transport.xml")
def test_the_fragment_maps_to_its_key_database_its_stash_and_tls_12_and_13_only():
    t = fragment()
    assert (t.host, t.port) == ("was1.example.com", 9443)
    got = {s.attribute: s.value for s in plugin_transport.attributes(t)}
    assert got["GSK_KEYRING_FILE"].endswith("/plugin-key.kdb")
    assert got["GSK_KEYRING_STASH_FILE"] == got["GSK_KEYRING_FILE"].removesuffix(".kdb") + ".sth"
    assert "GSK_KEYRING_LABEL" not in got  # no client certificate
    assert [got[f"GSK_PROTOCOL_{p}"] for p in ("SSLV2", "SSLV3", "TLSV1", "TLSV11", "TLSV12", "TLSV13")] == \
        ["511", "513", "519", "0", "1", "1"]
    assert set(got) <= set(gskit_server.ids())  # every attribute has its sourced number


@pytest.mark.negative(invariant="the plug-in transport mapping takes https and known properties only",
                      expects="AssertionError naming https for an http transport, naming password for an unknown "
                              "property")
def test_the_mapping_refuses_an_http_transport_and_an_unknown_property():
    with pytest.raises(AssertionError, match="https"):
        plugin_transport.transport('<Transport Hostname="h" Port="9080" Protocol="http"/>')
    with pytest.raises(AssertionError, match="password"):
        plugin_transport.transport('<Transport Hostname="h" Port="9443" Protocol="https">'
                                   '<Property Name="password" Value="x"/></Transport>')


# --- on the amd64 host: GSKit connects to the WebSphere stand-in ----------------------------------------------------


@pytest.fixture(params=["debian13-amd64"], ids=str)  # the wheel is built for x86_64 only
def plugin_host(request, zr_host_pool):
    """The amd64 host from the WAS chapter's VERIFY_KEY state (token key and certificate for the stand-in), the wheel
    mounted read-only, gskconnect and gskserve (for its key database modes) built, was1.example.com at 127.0.0.1."""
    host = zr_host_pool.start(request.param, "-v", f"{clidriver.folder()}:{clidriver.IN_CONTAINER}:ro",
                              state=VERIFY_KEY)
    try:
        start_pkcsslotd(host)
        host.zr_gskconnect = plugin_transport.build(host)
        host.zr_gskserve = gskit_server.build(host)
        host.run_expect([0], f"echo '127.0.0.1 {fragment().host}' >> /etc/hosts")
        yield host
    finally:
        zr_host_pool.remove(host)


def key_database(host, signer_pem: str | None, *, password: str = KDB_PW) -> None:
    """The fragment's keyring and stash, made by GSKit's key management library: a new CMS key database holding
    signer_pem (the application server's CA; here its self-signed certificate) as a signer, or no signer."""
    kdb = fragment().properties["keyring"]
    host.run_expect([0], f"mkdir -p $(dirname {kdb}) && rm -f {kdb.removesuffix('.kdb')}.*")
    signer = ""
    if signer_pem:
        host.run_expect([0], f"openssl x509 -in {signer_pem} -outform DER -out /tmp/signer.der")
        signer = " /tmp/signer.der"
    made = host.run(f"GSKSERVE_KEYDB_PW={KDB_PW} {gskit_server.ENV} {host.zr_gskserve} --create-kdb {kdb}{signer}")
    assert made.rc == 0, output(made)
    if password != KDB_PW:  # the stash of another password, over the right key database
        made = host.run(f"GSKSERVE_KEYDB_PW={password} {gskit_server.ENV} {host.zr_gskserve} --stash {kdb}")
        assert made.rc == 0, output(made)


def connect(host, count: int, settings=None):
    t = fragment()
    return host.run(f"timeout 120 env {plugin_transport.command(t, host.zr_gskconnect, count, settings)}")


def key_in_token(host):
    t = fragment()
    return host.run(f"{AS_WAS} env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} SLOT={slot_of(host)} "
                    f"bash {snippet_path(IN_TOKEN)} {t.host}:{t.port}")


def resumed(host, settings, protocol: str) -> list[int]:
    """ROUNDS runs of CONNECTIONS connections with these settings, each run a new GSKit environment: every
    handshake completes with the protocol; the number resumed per run."""
    counts = []
    for _ in range(ROUNDS):
        run = connect(host, CONNECTIONS, settings)
        assert run.rc == 0, output(run)
        lines = plugin_transport.results(run.stdout)
        assert len(lines) == CONNECTIONS, run.stdout
        assert {(r["rc"], r["protocol"]) for r in lines} == {(0, protocol)}, run.stdout
        counts.append(sum(r["resumed"] for r in lines))
    return counts


def tls12_only(settings):
    """TLS 1.3 off and GSKit's signature_algorithms extension on (see the TLS 1.2 test for why); TLS 1.3's ticket
    setting left out: with it on, GSKit 8.0.60.5 resumes no TLS 1.2 session (measured against openssl s_server)."""
    drop = {"GSK_PROTOCOL_TLSV13", "GSK_SSL_EXTN_SESSIONTICKET_ENABLE"}
    return [s for s in settings if s.attribute not in drop] + [
        gskit_server.Setting("GSK_PROTOCOL_TLSV13", "0", "TLS 1.2 only"),
        gskit_server.Setting("GSK_SSL_EXTN_SIGALG_SELECT_ALL", "1", "the signature_algorithms extension")]


def report(server: str, found: dict[str, list[int]]) -> None:
    for name, counts in found.items():
        print(f"GSKit {clidriver.GSKIT} client to {server}, {name}: {ROUNDS} runs of {CONNECTIONS} connections, "
              f"resumed {counts} (median {statistics.median(counts)}, spread {min(counts)}-{max(counts)})")


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
@pytest.mark.snippet(IN_TOKEN, checker="testinfra")
def test_gskit_connects_as_the_fragment_says_validates_websphere_and_the_key_is_in_the_token(plugin_host):
    host = plugin_host
    cert = start_server(host)
    key_database(host, cert)
    resumed_counts = []
    for _ in range(ROUNDS):
        run = connect(host, CONNECTIONS)
        assert run.rc == 0, output(run)
        lines = plugin_transport.results(run.stdout)
        assert len(lines) == CONNECTIONS, run.stdout
        assert {(r["rc"], r["protocol"]) for r in lines} == {(0, "TLSv1.3")}, run.stdout
        assert {r["cipher"] for r in lines} <= JAVA_NAMES & set(current_suites()) | JAVA_NAMES, run.stdout
        resumed_counts.append(sum(r["resumed"] for r in lines))
    print(f"GSKit {clidriver.GSKIT} client, TLS 1.3, {ROUNDS} runs of {CONNECTIONS} connections: resumed "
          f"{resumed_counts} (median {statistics.median(resumed_counts)}), full handshakes "
          f"{[CONNECTIONS - r for r in resumed_counts]}")
    assert resumed_counts == [0] * ROUNDS  # measured with GSKit 8.0.60.5: every connection a full handshake
    key = key_in_token(host)
    assert key.rc == 0, output(key)
    assert "private, sensitive, never extractable, generated in the token" in key.stdout


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
def test_gskit_tls_12_only_needs_its_signature_algorithms_extension_and_resumes_nothing(plugin_host):
    """The same transport with TLS 1.3 off, as a plug-in whose GSKit offers TLS 1.2 only. GSKit 8.0.60.5's TLS 1.2
    ClientHello then carries no signature_algorithms extension, so a server must sign its ECDHE key exchange with
    SHA-1 (RFC 5246, 7.4.1.4.1), which OpenJDK 21 refuses: every handshake fails. With GSK_SSL_EXTN_SIGALG_SELECT_ALL
    on, GSKit sends the extension and TLS 1.2 works; the resumed sessions are counted and printed."""
    host = plugin_host
    cert = start_server(host)
    key_database(host, cert)
    tls12 = [s for s in plugin_transport.attributes(fragment()) if s.attribute != "GSK_PROTOCOL_TLSV13"]
    tls12.append(gskit_server.Setting("GSK_PROTOCOL_TLSV13", "0", "TLS 1.2 only"))
    bare = connect(host, 2, tls12)
    assert [(r["rc"], r["error"]) for r in plugin_transport.results(bare.stdout)] == \
        [(420, "GSK_ERROR_SOCKET_CLOSED")] * 2, output(bare)
    tls12.append(gskit_server.Setting("GSK_SSL_EXTN_SIGALG_SELECT_ALL", "1", "the signature_algorithms extension"))
    resumed_counts = []
    for _ in range(ROUNDS):
        run = connect(host, CONNECTIONS, tls12)
        assert run.rc == 0, output(run)
        lines = plugin_transport.results(run.stdout)
        assert {(r["rc"], r["protocol"]) for r in lines} == {(0, "TLSv1.2")}, run.stdout
        assert {r["cipher"] for r in lines} <= {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                                               "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, run.stdout
        resumed_counts.append(sum(r["resumed"] for r in lines))
    t = fragment()
    control = host.run(f"openssl s_client -connect {t.host}:{t.port} -tls1_2 -CAfile {cert} -reconnect "
                       "< /dev/null 2>&1")
    reused = control.stdout.count("Reused, TLSv1.2")
    print(f"GSKit {clidriver.GSKIT} client, TLS 1.2, {ROUNDS} runs of {CONNECTIONS} connections: resumed "
          f"{resumed_counts} (median {statistics.median(resumed_counts)}); openssl s_client -reconnect against the "
          f"same server: {reused} of 5 reconnections resumed")
    assert reused == 5, output(control)  # the server resumes: what GSKit does not offer is the client's part
    assert resumed_counts == [0] * ROUNDS  # measured with GSKit 8.0.60.5: its client offers no earlier session


@pytest.mark.negative("ihs/plugin/plugin-cfg-transport.xml", expects="every handshake fails: 414 GSK_ERROR_BAD_CERT")
@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
def test_a_key_database_without_websphere_s_signer_fails_every_handshake(plugin_host):
    host = plugin_host
    start_server(host)
    key_database(host, None)
    run = connect(host, 2)
    assert run.rc == 1, output(run)
    lines = plugin_transport.results(run.stdout)
    assert [(r["rc"], r["error"]) for r in lines] == [(414, "GSK_ERROR_BAD_CERT")] * 2, run.stdout


@pytest.mark.negative("ihs/plugin/plugin-cfg-transport.xml",
                      expects="GSKit stops before any connection: 408 GSK_ERROR_BAD_KEYFILE_PASSWORD")
@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
def test_a_stash_of_another_password_stops_gskit_before_any_connection(plugin_host):
    host = plugin_host
    cert = start_server(host)
    key_database(host, cert, password="not-the-kdb-password")
    run = connect(host, 1)
    assert run.rc == 2, output(run)
    assert "gsk_environment_init: 408 GSK_ERROR_BAD_KEYFILE_PASSWORD" in run.stdout, output(run)


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
def test_gskit_without_the_mappings_protocols_cannot_reach_websphere(plugin_host):
    """Why plugin_transport.py names TLS 1.2 and 1.3: GSKit 8.0.60.5 left to its own protocol defaults fails against
    the stand-in (TLS 1.2 and 1.3 only, as set-ssl-config-current.py)."""
    host = plugin_host
    cert = start_server(host)
    key_database(host, cert)
    bare = [s for s in plugin_transport.attributes(fragment()) if not s.attribute.startswith("GSK_PROTOCOL")]
    run = connect(host, 1, bare)
    assert run.rc == 1, output(run)
    assert plugin_transport.results(run.stdout)[0]["rc"] != 0, run.stdout


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.negative("crypto/verify/check-key-in-token.sh",
                      expects="the check fails when WebSphere serves a key from a PKCS #12 file")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
@pytest.mark.snippet(IN_TOKEN, checker="testinfra")
def test_the_key_check_fails_when_websphere_serves_a_key_from_a_pkcs12_file(plugin_host):
    """Negative case of the page's outcome: GSKit still connects (the key database holds that certificate as its
    signer), but the key behind the certificate is in a file, and check-key-in-token.sh says so."""
    host = plugin_host
    gen = host.run(f"{AS_WAS} keytool -genkeypair -keystore /tmp/verify/key.p12 -storetype PKCS12 "
                   f"-storepass {KEYSTORE_PASSWORD} -alias default -keyalg RSA -keysize 2048 -dname CN=localhost "
                   "-ext san=dns:localhost -validity 30")
    assert gen.rc == 0, output(gen)
    start_server(host, pkcs12="/tmp/verify/key.p12")
    host.run_expect([0], f"{AS_WAS} keytool -exportcert -rfc -keystore /tmp/verify/key.p12 -storetype PKCS12 "
                         f"-storepass {KEYSTORE_PASSWORD} -alias default -file /tmp/verify/p12.pem")
    key_database(host, "/tmp/verify/p12.pem")
    run = connect(host, 1)
    assert run.rc == 0, output(run)
    key = key_in_token(host)
    assert key.rc == 1, output(key)
    assert "no private key in slot" in key.stderr, output(key)


def openssl_control(host) -> plugin_transport.Transport:
    """openssl s_server on 127.0.0.1:18443 with a key of its own, and a transport that reaches it (its certificate the
    signer of a second key database): the control that shows GSKit's client resuming TLS 1.3."""
    host.run_expect([0], "mkdir -p /tmp/ctl && cd /tmp/ctl && openssl req -x509 -newkey rsa:2048 -nodes "
                         "-subj /CN=localhost -keyout k.pem -out c.pem -days 2 2>/dev/null && openssl x509 -in c.pem "
                         "-outform DER -out c.der")
    made = host.run(f"GSKSERVE_KEYDB_PW={KDB_PW} {gskit_server.ENV} {host.zr_gskserve} --create-kdb /tmp/ctl/ctl.kdb "
                    "/tmp/ctl/c.der")
    assert made.rc == 0, output(made)
    host.run_expect([0], "cd /tmp/ctl && (openssl s_server -accept 18443 -cert c.pem -key k.pem -www -quiet "
                         "> s_server.log 2>&1 < /dev/null &) && sleep 1")
    return plugin_transport.Transport("127.0.0.1", 18443, {"keyring": "/tmp/ctl/ctl.kdb",
                                                           "stashfile": "/tmp/ctl/ctl.sth"})


def resumed_once(host, t: plugin_transport.Transport, settings) -> int:
    """One run of CONNECTIONS connections to t: the number resumed."""
    run = host.run(f"timeout 120 env {plugin_transport.command(t, host.zr_gskconnect, CONNECTIONS, settings)}")
    lines = plugin_transport.results(run.stdout)
    assert run.rc == 0, output(run)
    assert len(lines) == CONNECTIONS, output(run)
    return sum(r["resumed"] for r in lines)


def measure_reuse(host) -> dict[str, list[int]]:
    t = fragment()
    base = plugin_transport.attributes(t)
    both = base + plugin_transport.resuming(t)
    return {"TLS 1.3, the mapping alone": resumed(host, base, "TLSv1.3"),
            "TLS 1.3, peer ID and tickets": resumed(host, both, "TLSv1.3"),
            "TLS 1.2, the mapping alone": resumed(host, tls12_only(base), "TLSv1.2"),
            "TLS 1.2, peer ID without extended master secret": resumed(host, tls12_only(
                [s for s in both if s.attribute != "GSK_SSL_EXTN_EXTENDEDMASTERSECRET_CLIENT_ENABLE"]), "TLSv1.2"),
            "TLS 1.2, peer ID and extended master secret": resumed(host, tls12_only(both), "TLSv1.2")}


# measured against the WebSphere stand-in and Open Liberty alike (OpenJDK 21's JSSE): resumed sessions per run
JAVA_REUSE = {"TLS 1.3, the mapping alone": [0] * ROUNDS, "TLS 1.3, peer ID and tickets": [0] * ROUNDS,
              "TLS 1.2, the mapping alone": [0] * ROUNDS,
              "TLS 1.2, peer ID without extended master secret": [0] * ROUNDS,
              "TLS 1.2, peer ID and extended master secret": [CONNECTIONS - 1] * ROUNDS}


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
def test_gskit_resumes_tls_12_to_websphere_only_when_it_names_the_server_and_never_tls_13(plugin_host):
    """Session reuse on the plug-in's leg, measured. With the mapping alone GSKit's client resumes no session. It
    offers one only when each connection names its server (GSK_PEER_ID); the Java server then resumes TLS 1.2 sessions
    that used the extended master secret, and no TLS 1.3 session even with tickets on. The control, openssl s_server,
    resumes both protocols with the same settings, so the TLS 1.3 gap is between GSKit and JSSE, which this check did
    not explain. Whether IBM's plug-in sets any of these attributes could not be confirmed."""
    host = plugin_host
    cert = start_server(host)
    key_database(host, cert)
    found = measure_reuse(host)
    report("the WebSphere stand-in", found)
    ctl = openssl_control(host)
    control = {"TLS 1.3, the mapping alone": resumed_once(host, ctl, plugin_transport.attributes(ctl)),
               "TLS 1.3, peer ID and tickets": resumed_once(host, ctl, plugin_transport.attributes(ctl)
                                                            + plugin_transport.resuming(ctl)),
               "TLS 1.2, peer ID and extended master secret": resumed_once(host, ctl, tls12_only(
                   plugin_transport.attributes(ctl) + plugin_transport.resuming(ctl)))}
    print(f"control, openssl s_server, {CONNECTIONS} connections each: resumed {control}")
    assert found == JAVA_REUSE
    assert control == {"TLS 1.3, the mapping alone": 0, "TLS 1.3, peer ID and tickets": CONNECTIONS - 1,
                       "TLS 1.2, peer ID and extended master secret": CONNECTIONS - 1}


@pytest.fixture(params=["debian13-amd64"], ids=str)
def liberty_plugin_host(request, zr_host_pool):
    """The amd64 host from VERIFY_KEY with Open Liberty (checks/hosts/liberty.py) and the wheel mounted, the token
    key's certificate signed by a test CA and Liberty started by the WAS page's start-server.sh on 9443."""
    host = zr_host_pool.start(request.param, "-v", f"{clidriver.folder()}:{clidriver.IN_CONTAINER}:ro",
                              "-v", f"{liberty.runtime()}:{liberty.IN_CONTAINER}:ro", state=VERIFY_KEY)
    try:
        start_pkcsslotd(host)
        liberty.install(host)
        host.zr_ca = liberty.sign_with_test_ca(host)
        started = liberty.start(host)
        assert started.rc == 0, output(started)
        host.zr_gskconnect = plugin_transport.build(host)
        host.zr_gskserve = gskit_server.build(host)
        host.run_expect([0], f"echo '127.0.0.1 {fragment().host}' >> /etc/hosts")
        yield host
    finally:
        zr_host_pool.remove(host)


@pytest.mark.uses("was/liberty/jvm.options", "was/liberty/liberty-pkcs11.security", "was/liberty/server.xml",
                  "was/liberty/start-server.sh")
@pytest.mark.snippet(FRAGMENT, checker="gskit-client")
@pytest.mark.snippet(IN_TOKEN, checker="testinfra")
def test_gskit_connects_to_open_liberty_with_its_ca_as_the_signer_and_the_key_is_in_the_token(liberty_plugin_host):
    """The same transport against real Open Liberty with the WAS chapter's server.xml (key in the token), the key
    database holding the CA that signed Liberty's certificate, as step 2 adds it; the resumed sessions counted as
    against the stand-in, with the same result."""
    host = liberty_plugin_host
    key_database(host, host.zr_ca)
    found = measure_reuse(host)
    report(f"Open Liberty {liberty.VERSION}", found)
    assert found == JAVA_REUSE  # measured: as against the stand-in
    key = key_in_token(host)
    assert key.rc == 0, output(key)
    assert "private, sensitive, never extractable, generated in the token" in key.stdout
