"""Db2 over TLS, both ends. The server side cannot run here (no Db2 server): its script is checked by the CLP
validator against a sourced facts table, with the usual mistakes as negative cases. The client side runs for
real: IBM's JDBC driver (com.ibm.db2:jcc from Maven Central, zrunbook/db2/jcc.py) on the amd64 host connects with
the page's properties and truststore to `openssl s_server -msg`, which records the ClientHello and completes the
handshake but speaks no DRDA. What that proves: the driver offers the protocols and suites the page promises, and
they agree with the server page's SSL_VERSIONS and SSL_CIPHERSPECS; it trusts the runbook's CA and refuses another.
What it does not prove: that a Db2 server accepts the connection (nothing here speaks Db2's protocol).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import javaproperties
import pytest

from checks.hosts.steps import snippet_path
from checks.hosts.util import output
from checks.standins.db2 import endpoint
from zrunbook import FACTS, SNIPPETS, clidriver
from zrunbook.db2 import client_hello, jcc, values
from zrunbook.formats import clp
from zrunbook.shown_output import assert_shown_output, normalise_common

BAD = Path(__file__).resolve().parent / "bad"
ENABLE = "db2/tls/enable-tls.sh"
PROPS = "db2/tls/jdbc-tls.properties"
TEST = "db2/tls/test-jdbc-tls-connection.sh"
TRUSTSTORE = "db2/tls/create-client-truststore.sh"
WORK = "/tmp/db2tls"
PORT = 50001
TRUSTSTORE_PASSWORD = "zr-truststore-secret"  # test data only
DB_PASSWORD = "zr-db-user-secret"  # test data only


def server_settings() -> dict[str, str]:
    assert clp.commands((SNIPPETS / ENABLE).read_text(encoding="utf-8"))[1] == []
    return values.tls_settings()


def client_properties(text: str | None = None) -> dict[str, str]:
    return javaproperties.loads(text if text is not None else (SNIPPETS / PROPS).read_text(encoding="utf-8"))


# --- the server page's script, against the validator -----------------------------------------------------


@pytest.mark.snippet(ENABLE, checker="db2-clp")
def test_the_server_script_sets_tls_13_and_12_and_a_port_of_its_own():
    settings = server_settings()
    assert settings["SSL_VERSIONS"] == "TLSV13,TLSV12"
    assert settings["SSL_SVCENAME"] != settings["SVCENAME"]
    assert clp.validate((SNIPPETS / ENABLE).read_text(encoding="utf-8"), "current") == []


@pytest.mark.negative("db2/tls/enable-tls.sh",
                      expects="each bad script is rejected with its problem: unknown cipher spec, TLSV1, port clash, "
                              "no keystore, blank")
@pytest.mark.snippet(ENABLE, checker="db2-clp")
@pytest.mark.parametrize(("bad", "problem"), [
    ("tls-cipherspec-unknown.sh", "SSL_CIPHERSPECS: 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA512' is not one of"),
    ("tls-versions-tls1.sh", "SSL_VERSIONS: 'TLSV1' is not one of TLSV12|TLSV13"),
    ("tls-port-clash.sh", "SSL_SVCENAME 50000 is SVCENAME's port too"),
    ("tls-db2comm-without-keystore.sh",
     "DB2COMM includes SSL, but the script does not set SSL_SVR_KEYDB, SSL_SVR_STASH"),
    ("tls-cipherspecs-with-blank.sh", "keyword 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256' has no value"),
])
def test_the_validator_rejects_the_usual_tls_mistakes(bad, problem):
    found = clp.validate((BAD / bad).read_text(encoding="utf-8"), "current")
    assert any(problem in p for p in found), found


@pytest.mark.negative("db2/tls/enable-tls.sh",
                      expects="with GSKit's error recorded for a suite in the table the script is rejected: GSKit "
                              "refuses the suite")
@pytest.mark.snippet(ENABLE, checker="db2-clp")
def test_the_validator_refuses_a_cipherspec_the_table_records_gskit_refusing(tmp_path):
    """Today GSKit negotiates every SSL_CIPHERSPECS name (facts/db2/clp-keywords.csv, gskit_8_0_60, rechecked by
    checks/ihs/test_gskit_server.py); the negative case is the same table with GSKit's error recorded for one of the
    server script's suites: the script is then rejected with that error."""
    table = (FACTS / "db2" / "clp-keywords.csv").read_text(encoding="utf-8")
    suite = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
    assert f"; {suite} negotiated;" in table
    bad = tmp_path / "clp-keywords.csv"
    bad.write_text(table.replace(f"; {suite} negotiated;", f"; {suite} 13 GSK_INVALID_PARAMETER;"), encoding="utf-8")
    script = (SNIPPETS / ENABLE).read_text(encoding="utf-8")
    assert clp.validate(script, "current") == []
    found = clp.validate(script, "current", bad)
    assert any(f"SSL_CIPHERSPECS: GSKit {clidriver.GSKIT} refuses '{suite}' (13 GSK_INVALID_PARAMETER" in p
               for p in found), found


# --- the client, for real -------------------------------------------------------------------------------------


def truststore(host, ca: str, store: str = "") -> None:
    result = host.run(f"TRUSTSTORE_PASSWORD={TRUSTSTORE_PASSWORD} bash {snippet_path(TRUSTSTORE)} {ca} {store}")
    assert result.rc == 0, output(result)
    assert "trustedCertEntry" in result.stdout


def connect(host, properties: str | None = None):
    """The page's test script against the recording endpoint; (driver result, s_server -msg output)."""
    props = f" {properties}" if properties else ""
    return endpoint.recorded(host, WORK, PORT, f"JCC_JAR={jcc.IN_CONTAINER}/jcc-{jcc.VERSION}.jar DB_USER=db2inst1 "
                             f"DB_PASSWORD={DB_PASSWORD} TRUSTSTORE_PASSWORD={TRUSTSTORE_PASSWORD} "
                             f"bash {snippet_path(TEST)} localhost:{PORT} TRADEDB{props}")


def variant(host, name: str, edit: str) -> str:
    """A copy of the page's properties file changed by a sed expression; returns its path."""
    path = f"{WORK}/{name}.properties"
    host.run_expect([0], f"sed {shlex.quote(edit)} {snippet_path(PROPS)} > {path}")
    return path


@pytest.fixture
def client(jdbc_host):
    endpoint.pki(jdbc_host, WORK)
    truststore(jdbc_host, f"{WORK}/ca.pem")
    names = client_hello.names(jdbc_host.check_output("openssl ciphers -V -stdname 'ALL:COMPLEMENTOFALL'"))
    return jdbc_host, names


@pytest.mark.snippet(PROPS, TEST, TRUSTSTORE, checker="jdbc-driver")
@pytest.mark.snippet(ENABLE, checker="jdbc-driver")
def test_the_driver_offers_what_the_pages_promise_and_completes_the_handshake(client):
    host, names = client
    result, hello = connect(host)
    offer = client_hello.parse(hello)
    assert client_hello.promise_problems(offer, names, client_properties(), server_settings()) == []
    assert offer.versions == ("TLSv1.3", "TLSv1.2")
    assert "CIPHER is TLS_AES_256_GCM_SHA384" in hello, hello[-2000:]
    # the endpoint is not Db2: after the handshake the driver finds no DRDA reply, and says so
    assert result.rc == 1
    assert "Insufficient data" in result.stdout, output(result)
    assert "IBM Data Server Driver for JDBC and SQLJ" in result.stdout
    for secret in (TRUSTSTORE_PASSWORD, DB_PASSWORD):
        assert secret not in result.stdout + result.stderr, "the test script printed a password"


@pytest.mark.negative("db2/tls/test-jdbc-tls-connection.sh",
                      expects="the JDBC driver refuses the server with a truststore of another CA")
@pytest.mark.snippet(PROPS, TEST, TRUSTSTORE, checker="jdbc-driver")
@pytest.mark.snippet("db2/tls/test-jdbc-tls-connection.wrong-ca.out", checker="output-regenerated")
def test_a_truststore_with_another_ca_refuses_the_server(client):
    host, _names = client
    truststore(host, f"{WORK}/other.pem", f"{WORK}/wrong.p12")
    wrong = variant(host, "wrong-ca", f"s|^sslTrustStoreLocation=.*|sslTrustStoreLocation={WORK}/wrong.p12|")
    result, hello = connect(host, wrong)
    assert result.rc == 1
    assert "PKIX path building failed" in result.stdout, output(result)
    assert "CIPHER is" not in hello
    # what a reader sees: the driver's own lines, up to its usage text (the connection URL names the test's files)
    shown = result.stdout.split("IBM Data Server Driver for JDBC and SQLJ(c)")[0]
    assert_shown_output("db2/tls/test-jdbc-tls-connection.wrong-ca.out", shown,
                        lambda t: normalise_common(re.sub(r"-url \S+", "-url <url>", t)))


@pytest.mark.uses("db2/tls/create-client-truststore.sh", "db2/tls/enable-tls.sh", "db2/tls/test-jdbc-tls-connection.sh")
@pytest.mark.snippet(PROPS, checker="jdbc-driver")
def test_without_ssl_connection_the_check_finds_no_tls_at_all(client):
    host, names = client
    _result, hello = connect(host, variant(host, "no-tls", "/^sslConnection=/d"))
    offer = client_hello.parse(hello)
    assert offer is None
    assert client_hello.promise_problems(offer, names, {}, server_settings()) == [
        "the driver sent no TLS ClientHello: the connection (and the user's password) went in clear"]


@pytest.mark.uses("db2/tls/create-client-truststore.sh", "db2/tls/enable-tls.sh", "db2/tls/test-jdbc-tls-connection.sh")
@pytest.mark.snippet(PROPS, checker="jdbc-driver")
def test_without_ssl_cipher_suites_the_driver_offers_suites_the_page_does_not_promise(client):
    host, names = client
    path = variant(host, "jdk-defaults", "/^sslCipherSuites=/d")
    _result, hello = connect(host, path)
    offer = client_hello.parse(hello)
    props = client_properties(host.file(path).content_string)
    problems = client_hello.promise_problems(offer, names, props, server_settings())
    assert any(p.startswith("no sslCipherSuites: the driver offered the JDK's defaults") for p in problems), problems
    print("what the driver offers without sslCipherSuites:", problems)
    outside = [p for p in problems if "TLS 1.2 suites offered that the server's SSL_CIPHERSPECS does not allow" in p]
    assert outside, problems
    assert "_CBC_" in outside[0]  # CBC suites (and DHE ones): the server of the page refuses them


@pytest.mark.negative(invariant="the JDBC driver offers only protocols the server accepts, the highest included",
                      expects="the driver's offer of TLSv1.1 and its missing TLSv1.3 are each named as a problem")
def test_the_promise_check_rejects_an_older_protocol_and_a_missing_highest_one():
    server = {"SSL_VERSIONS": "TLSV13,TLSV12", "SSL_CIPHERSPECS": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}
    names = {0xC030: "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}
    props = {"sslCipherSuites": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}
    old = client_hello.Offer((0xC030,), ("TLSv1.2", "TLSv1.1"))
    assert client_hello.promise_problems(old, names, props, server) == [
        "the driver offered ['TLSv1.1'], which the server's SSL_VERSIONS ['TLSv1.3', 'TLSv1.2'] does not accept",
        "the driver did not offer TLSv1.3, the highest protocol the server accepts"]


def datasource_properties(ca: str) -> str:
    """The driver properties the WebSphere data-source script sets (its PROPERTIES list, read, not copied), as a
    properties file: sslCertLocation instead of a truststore; the port is the connection's."""
    import ast

    tree = ast.parse((SNIPPETS / "was/wsadmin/set-datasource-tls.py").read_text(encoding="utf-8"))
    (assign,) = [n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PROPERTIES"]
    lines = []
    for elt in assign.value.elts:
        name, value = elt.elts[0].value, elt.elts[2]
        if name == "portNumber":
            continue
        lines.append(f"{name}={ca if name == 'sslCertLocation' else ast.literal_eval(value)}")
    return "\n".join(lines) + "\n"


@pytest.mark.uses("db2/tls/create-client-truststore.sh", "db2/tls/enable-tls.sh", "db2/tls/test-jdbc-tls-connection.sh")
@pytest.mark.snippet("was/wsadmin/set-datasource-tls.py", checker="jdbc-driver")
def test_the_websphere_data_source_properties_trust_a_pem_file_without_a_truststore(client):
    host, names = client
    for ca, trusted in ((f"{WORK}/ca.pem", True), (f"{WORK}/other.pem", False)):
        path = f"{WORK}/datasource-{trusted}.properties"
        host.run_expect([0], f"printf '%s' {shlex.quote(datasource_properties(ca))} > {path}")
        result, hello = connect(host, path)
        if trusted:
            offer = client_hello.parse(hello)
            assert client_hello.promise_problems(offer, names, client_properties(host.file(path).content_string),
                                                 server_settings()) == []
            assert "CIPHER is TLS_AES_256_GCM_SHA384" in hello
        else:
            assert "PKIX path building failed" in result.stdout, output(result)
