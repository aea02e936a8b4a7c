"""Db2's CLI and ODBC clients over TLS, for real: IBM's CLI driver (Db2 12.1.4 with GSKit 8.0.60, from PyPI's ibm_db
wheel: zrunbook/clidriver.py) runs on the amd64 host. The page's test script runs `db2cli validate -connect` with
the page's db2dsdriver.cfg (and, second, its connection string) against `openssl s_server -msg`
(checks/standins/db2/endpoint.py), which records the ClientHello, completes the handshake and speaks no DRDA.

What that proves: db2cli reads the file and knows every keyword in it; the handshake completes with the CA the file
names; the ClientHello offers TLS 1.3 alone, which the server page's SSL_VERSIONS accepts; a server certificate from
another CA, one for another host name, and a server that does not allow TLS 1.3 are refused; a misspelt keyword
leaves the connection in clear and the script says so. What it does not prove: that a Db2 server accepts the login
(nothing here speaks Db2's protocol), so the script's passing branch ([SUCCESS]) has not run here.
"""

from __future__ import annotations

import shlex

import pytest

from checks.hosts.steps import snippet_path
from checks.hosts.util import output
from checks.standins.db2 import endpoint
from zrunbook import SNIPPETS, clidriver, registry
from zrunbook.db2 import client_hello, values
from zrunbook.formats import clp
from zrunbook.shown_output import assert_shown_output, normalise_common

CFG = "db2/tls/db2dsdriver.cfg"
CONNSTR = "db2/tls/cli-tls-connection-string.txt"
TEST = "db2/tls/test-cli-tls-connection.sh"
WRONG_CA = "db2/tls/test-cli-tls-connection.wrong-ca.out"
ENABLE = "db2/tls/enable-tls.sh"
WORK = "/tmp/db2cli"
SERVER_CERT = "/etc/pki/db2/server.pem"  # where the page's files expect the server's certificate (or its CA)
HOST = "db2.example.com"  # the server name in the page's files; the checks connect to localhost instead
DB_PASSWORD = "zr-db-user-secret"  # test data only
# the TLS 1.3 suites GSKit 8.0.60 offers, in its order (0x1301-0x1305: RFC 8446, B.4)
GSKIT_TLS13 = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
               "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256")


def server_settings() -> dict[str, str]:
    assert clp.commands((SNIPPETS / ENABLE).read_text(encoding="utf-8"))[1] == []
    return values.tls_settings()


def port() -> int:
    return int(values.tls_port())


# --- the files agree with each other and with the server page (no host) --------------------------------------------


@pytest.mark.uses("db2/tls/cli-tls-connection-string.txt", "db2/tls/db2dsdriver.cfg", "db2/tls/enable-tls.sh")
def test_the_configuration_and_the_connection_string_name_the_server_scripts_tls_port():
    cfg = (SNIPPETS / CFG).read_text(encoding="utf-8")
    pairs = dict(p.split("=", 1) for p in (SNIPPETS / CONNSTR).read_text(encoding="utf-8").strip().split(";") if p)
    assert cfg.count(f'port="{port()}"') == 2, "the dsn and the database entries use Db2's TLS port"
    assert (pairs["PORT"], pairs["HOSTNAME"], pairs["SECURITY"]) == (str(port()), HOST, "SSL")
    assert pairs["SSLServerCertificate"] == SERVER_CERT
    assert f'host="{HOST}"' in cfg
    assert f'value="{SERVER_CERT}"' in cfg


def test_the_db2cli_checker_names_the_driver_and_gskit_levels_the_checks_measure():
    what = registry.checkers()["db2cli"]["what"]
    for level in (clidriver.DB2_LEVEL.split()[-1], clidriver.GSKIT, f"ibm_db {clidriver.VERSION}"):
        assert level in what


# --- db2cli, for real ---------------------------------------------------------------------------------------------


def copied(host, rel: str, name: str, *edits: str) -> str:
    """A copy of a page's file in WORK for the check host: the server is localhost, and more sed edits; its path."""
    path = f"{WORK}/{name}"
    script = " ".join(f"-e {shlex.quote(e)}" for e in (f"s/{HOST}/localhost/g", *edits))
    host.run_expect([0], f"sed {script} {snippet_path(rel)} > {path}")
    return path


def run(host, arg: str, *, cfg: str = "", env: str = clidriver.ENV, **endpoint_args):
    """The page's test script with one argument (a data source or a connection string) against the endpoint."""
    cfg_path = f"DB2DSDRIVER_CFG_PATH={cfg} " if cfg else ""
    command = (f"{env} {cfg_path}DB_USER=db2inst1 DB_PASSWORD={DB_PASSWORD} "
               f"bash {snippet_path(TEST)} {shlex.quote(arg)}")
    result, hello = endpoint.recorded(host, WORK, port(), command, hold=4, **endpoint_args)
    assert DB_PASSWORD not in result.stdout + result.stderr, "the test script printed the password"
    return result, hello


@pytest.fixture
def cli(cli_host):
    endpoint.pki(cli_host, WORK)
    cli_host.run_expect([0], f"mkdir -p {SERVER_CERT.rsplit('/', 1)[0]} && cp {WORK}/ca.pem {SERVER_CERT}")
    names = client_hello.names(cli_host.check_output("openssl ciphers -V -stdname 'ALL:COMPLEMENTOFALL'"))
    return cli_host, names


def offered(hello: str, names: dict[int, str]) -> tuple[client_hello.Offer, tuple[str, ...]]:
    """The ClientHello the endpoint recorded, and the names of the suites it offered."""
    offer = client_hello.parse(hello)
    assert offer is not None, "the driver sent no TLS ClientHello"
    return offer, tuple(names.get(c, f"0x{c:04X}") for c in offer.suites)


def test_db2cli_is_the_pinned_driver_and_links_ibm_gskit(cli):
    host, _names = cli
    level = host.run(f"{clidriver.ENV} db2level")
    assert clidriver.DB2_LEVEL in level.stdout, output(level)
    build = host.check_output(f"grep -a -o 'GoldCoast Build [^ ]*) [0-9_.]*' "
                              f"{clidriver.IN_CONTAINER}/clidriver/lib/icc/libgsk8ssl_64.so | head -1")
    assert build.endswith(clidriver.GSKIT), build
    linked = host.check_output(f"{clidriver.ENV} ldd {clidriver.IN_CONTAINER}/clidriver/lib/libdb2.so.1")
    assert "not found" not in linked, linked


def assert_refused(result, db2cli_says: str, script_says: str = "") -> None:
    """The script failed (exit 1), db2cli's output names the cause and the script's sentence tells what to do."""
    assert result.rc == 1, output(result)
    assert db2cli_says in result.stdout, output(result)
    assert script_says in result.stderr, output(result)


def assert_reached_tls_13_and_went_past_the_handshake(result, hello: str, names: dict[int, str]) -> None:
    offer, suites = offered(hello, names)
    assert offer.versions == ("TLSv1.3",), offer.versions
    assert suites == GSKIT_TLS13, suites
    assert client_hello.version_problems(offer, server_settings()) == []
    assert "CIPHER is TLS_AES_" in hello, hello[-2000:]
    # the endpoint is not Db2: after the handshake the driver waits for a DRDA reply, and the socket closes
    assert result.rc == 1, output(result)
    assert "sqlccSSLSocketRead" in result.stdout, output(result)


@pytest.mark.snippet(CFG, TEST, checker="db2cli")
@pytest.mark.snippet(ENABLE, checker="db2cli")
def test_db2cli_reads_the_configuration_and_offers_tls_13_the_server_accepts(cli):
    host, names = cli
    cfg = copied(host, CFG, "db2dsdriver.cfg")
    schema = host.run(f"{clidriver.ENV} DB2DSDRIVER_CFG_PATH={cfg} db2cli validate -dsn TRADETLS")
    assert schema.rc == 0, output(schema)
    assert "schema validation completed successfully" in schema.stdout, output(schema)
    result, hello = run(host, "TRADETLS", cfg=cfg)
    for keyword, value in (("SECURITYTRANSPORTMODE", "SSL"), ("SSLSERVERCERTIFICATE", SERVER_CERT),
                           ("TLSVERSION", "TLSV13"), ("SSLCLIENTHOSTNAMEVALIDATION", "Basic")):
        assert any(line.split()[::2] == [keyword, value] for line in result.stdout.splitlines()), output(result)
    assert "**UNKNOWN**" not in result.stdout
    assert_reached_tls_13_and_went_past_the_handshake(result, hello, names)


@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.snippet(CONNSTR, TEST, checker="db2cli")
def test_the_connection_string_makes_the_same_tls_13_connection(cli):
    host, names = cli
    text = host.file(copied(host, CONNSTR, "connection-string.txt")).content_string.strip()
    result, hello = run(host, text)
    assert_reached_tls_13_and_went_past_the_handshake(result, hello, names)


@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.negative("db2/tls/test-cli-tls-connection.sh",
                      expects="db2cli refuses a server certificate from another CA")
@pytest.mark.snippet(CFG, TEST, checker="db2cli")
@pytest.mark.snippet(WRONG_CA, checker="output-regenerated")
def test_a_server_certificate_from_another_ca_is_refused(cli):
    host, _names = cli
    cfg = copied(host, CFG, "wrong-ca.cfg", f"s|{SERVER_CERT}|{WORK}/other.pem|")
    result, hello = run(host, "TRADETLS", cfg=cfg)
    assert_refused(result, '"sqlccSSLSocketSetup".  Protocol specific error code(s): "414"',  # GSKit: bad cert
                   "the TLS handshake failed")
    assert "bad_certificate" in hello, hello[-2000:]
    # what a reader sees: db2cli's verdict and the script's sentence (the table before it names the check's files)
    shown = "".join(line + "\n" for line in result.stdout.splitlines() if line.startswith("[FAILED]")) + result.stderr
    assert_shown_output(WRONG_CA, shown, normalise_common)


@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.negative("db2/tls/test-cli-tls-connection.sh",
                      expects="the connection test fails: the server's certificate names another host")
@pytest.mark.snippet(CFG, TEST, checker="db2cli")
def test_a_server_certificate_for_another_host_name_is_refused(cli):
    host, _names = cli
    result, _hello = run(host, "TRADETLS", cfg=copied(host, CFG, "db2dsdriver.cfg"), cert="db2-other.example.com")
    assert_refused(result, "SQL20576N", "does not name the host you connect to")


@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.negative("db2/tls/test-cli-tls-connection.sh",
                      expects="the connection test fails against a server that does not allow TLS 1.3")
@pytest.mark.snippet(CFG, TEST, checker="db2cli")
def test_a_server_that_does_not_allow_tls_13_is_refused(cli):
    host, names = cli
    result, hello = run(host, "TRADETLS", cfg=copied(host, CFG, "db2dsdriver.cfg"), server_args="-tls1_2")
    assert offered(hello, names)[0].versions == ("TLSv1.3",)
    assert "CIPHER is" not in hello
    assert_refused(result, '"sqlccSSLSocketSetup".  Protocol specific error code(s): "446:70"',  # alert 70: version
                   "the TLS handshake failed")


@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.negative("db2/tls/test-cli-tls-connection.sh",
                      expects="a misspelt security transport mode goes in clear and the script stops")
@pytest.mark.snippet(CFG, TEST, checker="db2cli")
def test_a_misspelt_security_transport_mode_goes_in_clear_and_the_script_stops(cli):
    host, _names = cli
    cfg = copied(host, CFG, "misspelt.cfg", "s/SecurityTransportMode/SecurityTransportMod/")
    result, hello = run(host, "TRADETLS", cfg=cfg)
    assert client_hello.parse(hello) is None  # the driver spoke DRDA in clear to the TLS port
    assert_refused(result, "**UNKNOWN**", "leaves the connection in clear")


@pytest.mark.uses("db2/tls/enable-tls.sh", "db2/tls/test-cli-tls-connection.sh")
@pytest.mark.snippet(CFG, checker="db2cli")
def test_without_tls_version_the_driver_also_offers_tls_12_with_cbc_suites(cli):
    host, names = cli
    result, hello = run(host, "TRADETLS", cfg=copied(host, CFG, "default.cfg", "/TLSVersion/d"))
    offer, suites = offered(hello, names)
    assert offer.versions == ("TLSv1.3", "TLSv1.2")
    with pytest.raises(AssertionError, match="TLSv1.2"):  # the page's check fails on this file, as it must
        assert_reached_tls_13_and_went_past_the_handshake(result, hello, names)
    tls12 = [s for s in suites if "_WITH_" in s]
    assert tls12
    assert all(s.startswith("TLS_ECDHE_") for s in tls12), tls12  # no RSA key exchange, no DHE
    outside = sorted(set(tls12) - set(server_settings()["SSL_CIPHERSPECS"].split(",")))
    assert any("_CBC_" in s for s in outside), outside  # the server of the page refuses these; it chooses
    print("TLS 1.2 suites db2cli offers that the server's SSL_CIPHERSPECS does not allow:", outside)


@pytest.mark.negative("db2/tls/db2dsdriver.cfg", "db2/tls/test-cli-tls-connection.sh",
                      expects="a configuration the driver refuses sends no ClientHello and the connection test says "
                              "why")
@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.snippet(CFG, TEST, checker="db2cli")
@pytest.mark.parametrize(("edit", "said"), [
    # a list is not a value of TLSVersion: the driver refuses the keyword before it connects
    ("s/\"TLSV13\"/\"TLSV13,TLSV12\"/", "CLI0134E"),
    # TLS 1.0 and 1.1, documented as TLSV1: this driver's GSKit refuses to set them
    ("s/\"TLSV13\"/\"TLSV1\"/", "sqlccSetClientSSLVersions"),
    # a broken file: db2cli's schema validation fails and the script stops before any verdict
    ("s|</databases>|</database>|", "Expected end of tag 'databases'"),
], ids=["tls-version-list", "tls-version-tlsv1", "broken-xml"])
def test_a_configuration_the_driver_refuses_sends_no_client_hello(cli, edit, said):
    host, _names = cli
    result, hello = run(host, "TRADETLS", cfg=copied(host, CFG, "refused.cfg", edit))
    assert client_hello.parse(hello) is None
    assert_refused(result, said)


@pytest.mark.negative("db2/tls/test-cli-tls-connection.sh",
                      expects="the script stops with a sentence without db2cli or without TLS in the connection string")
@pytest.mark.snippet(TEST, checker="db2cli")
def test_the_script_stops_with_a_sentence_without_db2cli_or_tls_in_the_connection_string(cli):
    host, _names = cli
    result = host.run(f"DB_USER=db2inst1 DB_PASSWORD={DB_PASSWORD} bash {snippet_path(TEST)} TRADETLS")
    assert result.rc == 1
    assert "db2cli is not on PATH" in result.stderr, output(result)
    clear = "DATABASE=TRADEDB;HOSTNAME=localhost;PORT=50000;PROTOCOL=TCPIP"
    result = host.run(f"{clidriver.ENV} DB_USER=db2inst1 DB_PASSWORD={DB_PASSWORD} bash {snippet_path(TEST)} "
                      f"{shlex.quote(clear)}")
    assert result.rc == 1
    assert "has no SECURITY=SSL" in result.stderr, output(result)


# --- post-quantum key exchange: what the GSKit client offers (issue 44, item 4) -----------------------------------


@pytest.mark.uses("db2/tls/enable-tls.sh")
def test_the_parser_reads_the_groups_openssl_offers_so_an_ml_kem_offer_would_be_seen(cli):
    """The control: OpenSSL 3.5's s_client asked for X25519MLKEM768 and X25519 shows both in supported_groups and
    the hybrid one in key_share, so the next tests' 'no ML-KEM' is read from a parser that sees ML-KEM."""
    host, _names = cli
    result, hello = endpoint.recorded(host, WORK, port(), f"echo | openssl s_client -connect localhost:{port()} "
                                                          "-groups X25519MLKEM768:X25519 -brief", hold=3)
    offer = client_hello.parse(hello)
    assert offer is not None, hello[-2000:]
    assert offer.groups == (0x11EC, 0x001D), offer.groups
    assert offer.key_shares[0] == 0x11EC, offer.key_shares


@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.snippet(CFG, TEST, checker="db2cli")
def test_db2cli_offers_only_classical_key_exchange_groups(cli):
    """GSKit 8.0.60.5 as db2cli's TLS 1.3 client, with the page's configuration: its supported_groups and key_share
    name no ML-KEM group (hybrid or pure). The groups it does offer are what the post-quantum page quotes."""
    host, _names = cli
    _result, hello = run(host, "TRADETLS", cfg=copied(host, CFG, "db2dsdriver.cfg"))
    offer = client_hello.parse(hello)
    assert offer is not None, "the driver sent no TLS ClientHello"
    named = [client_hello.GROUPS.get(g, f"0x{g:04X}") for g in offer.groups]
    assert offer.groups, hello[-2000:]
    assert not set(offer.groups) & client_hello.ML_KEM, named
    assert not set(offer.key_shares) & client_hello.ML_KEM, offer.key_shares
    assert named == list(values.GSKIT_CLIENT_GROUPS), named


@pytest.mark.uses("db2/tls/enable-tls.sh")
@pytest.mark.negative("db2/tls/test-cli-tls-connection.sh",
                      expects="the connection test fails against a server that allows only ML-KEM key exchange")
@pytest.mark.snippet(CFG, TEST, checker="db2cli")
def test_against_a_server_that_allows_only_ml_kem_groups_db2cli_s_handshake_fails(cli):
    host, _names = cli
    result, hello = run(host, "TRADETLS", cfg=copied(host, CFG, "db2dsdriver.cfg"),
                        server_args="-groups X25519MLKEM768:SecP256r1MLKEM768:SecP384r1MLKEM1024:MLKEM768")
    assert client_hello.parse(hello) is not None  # the driver offered, the server found no group in common
    assert "CIPHER is" not in hello
    assert_refused(result, '"sqlccSSLSocketSetup"', "the TLS handshake failed")
