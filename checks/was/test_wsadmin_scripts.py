"""The wsadmin scripts, run under the container's real Jython 2.7 against a recording fake of AdminConfig,
AdminTask and AdminControl (checks/standins/was/wsadmin_fake.py): the exact calls and arguments are asserted.

All scripts and negative cases of a host run in ONE Jython process (a JVM start costs seconds, far more under
qemu); the result of that run is shared by the tests of the module.
"""

import json
from pathlib import Path

import pytest

import zrunbook
from checks import standins
from checks.hosts.steps import snippet_path
from checks.hosts.util import copy_to, output
from zrunbook import FACTS
from zrunbook import facts as facts_tables

HERE = Path(__file__).resolve().parent
ZR = Path(zrunbook.__file__).resolve().parent
STANDINS = Path(standins.__file__).resolve().parent

HEAP = "was/wsadmin/set-heap-size.py"
KEYSIZE = "was/wsadmin/set-default-cert-key-size.py"
LTPA = "was/wsadmin/set-ltpa-software-jce-2013.py"
SSL_NOW = "was/wsadmin/set-ssl-config-current.py"
SSL_2013 = "was/wsadmin/set-ssl-config-2013.py"
DATASOURCE = "was/wsadmin/set-datasource-tls.py"
KEYSTORE = "was/wsadmin/create-token-keystore.py"
SIGNER = "was/wsadmin/add-signer-to-plugin-keystore.py"
TOKEN_CFG = "/etc/websphere/pkcs11-ica-token.cfg"  # where the provider page saves the token configuration
CA_PEM = "/etc/pki/db2/db2server.pem"
LTPA_NAME = "com.ibm.ws.security.ltpa.forceSoftwareJCEProviderForLTPA"
CURRENT_SUITES = ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256",
                  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]
BAD = sorted(p.name for p in (HERE / "bad").glob("*.py"))
# scripts the fake runs without complaint whose outcome is wrong: the plug-in keystore check must name each one
BAD_OUTCOME = sorted(p.name for p in (HERE / "bad" / "plugin-signer").glob("*.py"))
WSFAKE = "/tmp/wsfake"
WS_SCOPE = "(cell):cell01:(node):node01:(server):webserver1"
KDB_OLD, KDB_NEW = "WebAS", "n3w-kdb-secret"  # IBM's default and the one the script gives the key database
SIGNER_ARGS = ["node01", "webserver1", f"{WSFAKE}/ca.pem", f"{WSFAKE}/profile"]

CASES = {
    "heap": (HEAP, ["node01", "server1"], ()),
    "heap-4096": (HEAP, ["node01", "server1", "4096"], ()),
    "heap-unknown-server": (HEAP, ["node01", "server9"], ()),
    "heap-bad-size": (HEAP, ["node01", "server1", "2g"], ()),
    "keysize": (KEYSIZE, [], ()),
    "keysize-4096": (KEYSIZE, ["4096"], ()),
    "keysize-1024": (KEYSIZE, ["1024"], ()),
    "ltpa": (LTPA, ["node01", "server1"], ()),
    "ltpa-again": (LTPA, ["node01", "server1"], (LTPA_NAME,)),
    "ssl-now": (SSL_NOW, ["node01"], ()),
    "ssl-now-unknown-node": (SSL_NOW, ["node09"], ()),
    "ssl-2013": (SSL_2013, ["node01", "CellDefaultSSLSettings"], ()),
    "datasource": (DATASOURCE, ["TradeDataSource", "50001", CA_PEM], ()),
    "datasource-unknown": (DATASOURCE, ["NoSuchDataSource", "50001", CA_PEM], ()),
    "datasource-bad-port": (DATASOURCE, ["TradeDataSource", "db2tls", CA_PEM], ()),
    "keystore": (KEYSTORE, ["node01"], ()),
    "keystore-no-pin": (KEYSTORE, ["node01"], ()),
    "keystore-unknown-node": (KEYSTORE, ["node09"], ()),
    "signer": (SIGNER, SIGNER_ARGS, ()),
    "signer-der": (SIGNER, [*SIGNER_ARGS[:2], f"{WSFAKE}/ca.der", SIGNER_ARGS[3], "was-ca-der"], ()),
    "signer-again": (SIGNER, [*SIGNER_ARGS, "root"], ()),
    "signer-no-password": (SIGNER, SIGNER_ARGS, ()),
    "signer-default-as-new": (SIGNER, SIGNER_ARGS, ()),
    "signer-missing-ca": (SIGNER, [*SIGNER_ARGS[:2], f"{WSFAKE}/no-such-ca.pem", SIGNER_ARGS[3]], ()),
    "signer-private-key": (SIGNER, [*SIGNER_ARGS[:2], f"{WSFAKE}/ca.key", SIGNER_ARGS[3]], ()),
    "signer-unknown-webserver": (SIGNER, ["node01", "webserver9", *SIGNER_ARGS[2:]], ()),
    "signer-app-server": (SIGNER, ["node01", "server1", *SIGNER_ARGS[2:]], ()),
    "signer-wrong-profile": (SIGNER, [*SIGNER_ARGS[:3], "/tmp"], ()),
}
# the environment of a case (the token's PIN comes from TOKEN_USER_PIN, never from an argument)
ENV = {"keystore": {"TOKEN_USER_PIN": "56781234"}, "keystore-unknown-node": {"TOKEN_USER_PIN": "56781234"}}
KDB_ENV = {"PLUGIN_KDB_PASSWORD": KDB_OLD, "PLUGIN_KDB_NEW_PASSWORD": KDB_NEW}
ENV.update({key: KDB_ENV for key in CASES if key.startswith("signer") and key != "signer-no-password"})
ENV["signer-default-as-new"] = {"PLUGIN_KDB_PASSWORD": "0ld-kdb-secret", "PLUGIN_KDB_NEW_PASSWORD": KDB_OLD}

# the module's host gets every wsadmin script at once; the reads fall on whichever test sets it up first
pytestmark = pytest.mark.uses("was/wsadmin/*.py")


def cipher_names():
    return [row["suite"] for row in facts_tables.table("was/cipher-suites")]


_RUNS: dict = {}


@pytest.fixture
def runs(host):
    """The batch's results for this host: run once per host (per xdist worker), then reused."""
    if host.zr_name not in _RUNS:
        _RUNS[host.zr_name] = run_batch(host)
    return _RUNS[host.zr_name]


def run_batch(host):
    """Copy the fake, the negative cases and a plan into the container; run them all in one Jython."""
    copy_to(host, (STANDINS / "was" / "wsadmin_fake.py").read_text(), "/tmp/wsfake/wsadmin_fake.py")
    copy_to(host, (ZR / "was" / "wsadmin_args.py").read_text(), "/tmp/wsfake/wsadmin_args.py")
    # the plug-in keystore script's inputs: a CA certificate (PEM and DER, its key for the refusal) made by OpenSSL,
    # and a profile directory that holds the cell's configuration
    made = host.run(f"mkdir -p {WSFAKE}/profile/config/cells/cell01 && cd {WSFAKE} && "
                    "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem "
                    "-subj /CN=zrunbook-test-ca -days 1 && openssl x509 -in ca.pem -outform der -out ca.der")
    assert made.rc == 0, output(made)
    cases = [{"id": key, "script": snippet_path(rel), "argv": argv, "properties": list(props), "env": ENV.get(key)}
             for key, (rel, argv, props) in CASES.items()]
    for name in BAD:
        copy_to(host, (HERE / "bad" / name).read_text(), f"/tmp/wsfake/bad/{name}")
        cases.append({"id": f"bad/{name}", "script": f"/tmp/wsfake/bad/{name}", "argv": []})
    for name in BAD_OUTCOME:
        copy_to(host, (HERE / "bad" / "plugin-signer" / name).read_text(), f"{WSFAKE}/bad/plugin-signer/{name}")
        cases.append({"id": f"bad/plugin-signer/{name}", "script": f"{WSFAKE}/bad/plugin-signer/{name}", "argv": []})
    plan = {"commands_csv": (FACTS / "was" / "wsadmin-commands.csv").read_text(),
            "ciphers": cipher_names(), "cases": cases,
            "jdbc_properties": [[r["property"], r["type"]] for r in facts_tables.table("db2/jcc-properties")]}
    copy_to(host, json.dumps(plan), "/tmp/wsfake/plan.json")
    result = host.run("cd /tmp/wsfake && jython wsadmin_fake.py plan.json")
    assert result.rc == 0, output(result)
    return json.loads(result.stdout.strip().splitlines()[-1])


def calls(run):
    assert run["status"] == 0, run
    assert not run["error"], run
    return [(obj, method, args) for obj, method, args, _ in run["calls"]]


@pytest.mark.uses("was/wsadmin/add-signer-to-plugin-keystore.py", "was/wsadmin/create-token-keystore.py",
                  "was/wsadmin/set-datasource-tls.py", "was/wsadmin/set-default-cert-key-size.py",
                  "was/wsadmin/set-ltpa-software-jce-2013.py", "was/wsadmin/set-ssl-config-2013.py",
                  "was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(HEAP, checker="jython-fake")
def test_heap_script_sets_initial_and_maximum_heap_and_saves(runs):
    assert calls(runs["heap"]) == [
        ("AdminConfig", "getid", ["/Node:node01/Server:server1/"]),
        ("AdminTask", "setJVMProperties",
         ["[-nodeName node01 -serverName server1 -initialHeapSize 2048 -maximumHeapSize 2048]"]),
        ("AdminConfig", "save", []),
    ]
    assert "-initialHeapSize 4096 -maximumHeapSize 4096" in calls(runs["heap-4096"])[1][2][0]


@pytest.mark.snippet(HEAP, checker="jython-fake")
def test_heap_script_changes_nothing_for_an_unknown_server_or_size(runs):
    for key in ("heap-unknown-server", "heap-bad-size"):
        run = runs[key]
        assert run["status"] in (1, 2), run
        assert not [c for c in run["calls"] if c[1] == "save" or c[0] == "AdminTask"], run
    assert "No server server9 on node node01" in runs["heap-unknown-server"]["stdout"]


@pytest.mark.snippet(KEYSIZE, checker="jython-fake")
def test_key_size_script_sets_the_security_custom_property(runs):
    assert calls(runs["keysize"]) == [
        ("AdminTask", "setAdminActiveSecuritySettings",
         ['[-customProperties ["com.ibm.ssl.defaultCertReqKeySize=2048"]]']),
        ("AdminConfig", "save", []),
    ]
    assert "defaultCertReqKeySize=4096" in calls(runs["keysize-4096"])[0][2][0]
    assert runs["keysize-1024"]["status"] == 2
    assert runs["keysize-1024"]["calls"] == []


@pytest.mark.uses("was/wsadmin/add-signer-to-plugin-keystore.py", "was/wsadmin/create-token-keystore.py",
                  "was/wsadmin/set-datasource-tls.py", "was/wsadmin/set-default-cert-key-size.py",
                  "was/wsadmin/set-heap-size.py", "was/wsadmin/set-ssl-config-2013.py",
                  "was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(LTPA, checker="jython-fake")
def test_2013_ltpa_property_is_created_once_on_the_servers_jvm(runs):
    jvm = "(cells/cell01/nodes/node01/servers/server1|server.xml#JavaVirtualMachine_1)"
    server_id = "(cells/cell01/nodes/node01/servers/server1|server.xml#Server_1)"
    assert calls(runs["ltpa"]) == [
        ("AdminConfig", "getid", ["/Node:node01/Server:server1/"]),
        ("AdminConfig", "list", ["JavaVirtualMachine", server_id]),
        ("AdminConfig", "list", ["Property", jvm]),
        ("AdminConfig", "create", ["Property", jvm, [["name", LTPA_NAME], ["value", "true"],
                                                      ["description", "added for CEX support"]], "systemProperties"]),
        ("AdminConfig", "save", []),
    ]
    again = runs["ltpa-again"]
    assert again["status"] == 0, again
    assert "nothing changed" in again["stdout"], again
    assert not [c for c in again["calls"] if c[1] in ("create", "save")]


@pytest.mark.snippet(SSL_NOW, checker="jython-fake")
def test_current_ssl_config_allows_tls12_and_13_with_gcm_suites_only(runs):
    got = runs["ssl-now"]
    assert calls(got)[-1] == ("AdminConfig", "save", [])
    (task,) = [c for c in got["calls"] if c[0] == "AdminTask"]
    assert task[1] == "modifySSLConfig"
    params = dict(task[3])
    assert params == {"alias": "NodeDefaultSSLSettings", "scopeName": "(cell):cell01:(node):node01",
                      "sslProtocol": "TLSv1.2,TLSv1.3", "securityLevel": "CUSTOM",
                      "enabledCiphers": " ".join(CURRENT_SUITES)}


@pytest.mark.negative("was/wsadmin/set-ssl-config-current.py",
                      expects="an unknown node is refused (No node node09) before any AdminTask call or save")
@pytest.mark.snippet(SSL_NOW, checker="jython-fake")
def test_current_ssl_config_refuses_an_unknown_node(runs):
    run = runs["ssl-now-unknown-node"]
    assert run["status"] == 1, run
    assert "No node node09" in run["stdout"], run
    assert not [c for c in run["calls"] if c[0] == "AdminTask" or c[1] == "save"]


@pytest.mark.snippet(SSL_2013, checker="jython-fake")
def test_2013_ssl_config_enables_the_studys_single_suite(runs):
    (task,) = [c for c in runs["ssl-2013"]["calls"] if c[0] == "AdminTask"]
    assert dict(task[3]) == {"alias": "CellDefaultSSLSettings", "scopeName": "(cell):cell01:(node):node01",
                             "securityLevel": "CUSTOM", "enabledCiphers": "SSL_RSA_WITH_AES_256_CBC_SHA"}
    assert calls(runs["ssl-2013"])[-1] == ("AdminConfig", "save", [])


def datasource_properties(run) -> dict[str, str]:
    """name -> value the script leaves on the data source: created properties and modified existing ones."""
    names = {"(cells/cell01|resources.xml#J2EEResourceProperty_2)": "portNumber"}
    out = {}
    for obj, method, args in calls(run):
        if (obj, method) == ("AdminConfig", "create") and args[0] == "J2EEResourceProperty":
            attrs = dict(args[2])
            out[attrs["name"]] = attrs["value"]
        if (obj, method) == ("AdminConfig", "modify"):
            out[names[args[0]]] = dict(args[1])["value"]
    return out


@pytest.mark.snippet(DATASOURCE, checker="jython-fake")
def test_datasource_script_sets_the_drivers_tls_properties_and_the_tls_port(runs):
    got = runs["datasource"]
    assert calls(got)[-1] == ("AdminConfig", "save", [])
    assert datasource_properties(got) == {
        "sslConnection": "true", "sslVersion": "TLSv1.3", "sslCertLocation": CA_PEM, "portNumber": "50001",
        "sslCipherSuites": ",".join(CURRENT_SUITES)}
    assert not [c for c in got["calls"] if c[1] == "create" and dict(c[2][2]).get("name") == "portNumber"], \
        "portNumber exists already: it is modified, not created a second time"


@pytest.mark.snippet(DATASOURCE, "db2/tls/jdbc-tls.properties", checker="jython-fake")
def test_datasource_script_sets_what_the_db2_page_proves_with_the_real_driver(runs):
    import javaproperties

    from zrunbook import SNIPPETS

    page = javaproperties.loads((SNIPPETS / "db2/tls/jdbc-tls.properties").read_text(encoding="utf-8"))
    got = datasource_properties(runs["datasource"])
    for name in ("sslConnection", "sslVersion", "sslCipherSuites"):
        assert got[name] == page[name], name


@pytest.mark.snippet(DATASOURCE, checker="jython-fake")
def test_datasource_script_changes_nothing_for_an_unknown_data_source_or_port(runs):
    assert runs["datasource-unknown"]["status"] == 1
    assert "0 data sources are named NoSuchDataSource" in runs["datasource-unknown"]["stdout"]
    assert runs["datasource-bad-port"]["status"] == 2
    for key in ("datasource-unknown", "datasource-bad-port"):
        assert not [c for c in runs[key]["calls"] if c[1] in ("create", "modify", "save")], runs[key]


FAKE_SIGNERS = ("root",)  # the signers the fake's plug-in keystore holds before a script runs
SIGNER_CHANGES = ("addSignerCertificate", "changeKeyStorePassword", "save", "sync", "invoke")


def plugin_keystore_problems(run, alias="was-ca") -> list[str]:
    """What keeps the CA's signer from reaching the plug-in in a key database with a password of its own, read
    from the calls a script made: [] when nothing does. The order matters: only a saved configuration is what
    propagateKeyring copies to the web server."""
    made = [(obj, method, dict(parsed) if obj == "AdminTask" else parsed) for obj, method, _, parsed in run["calls"]]

    def first(pred, after=-1):
        return next((i for i, c in enumerate(made) if i > after and pred(*c)), None)

    added = -1 if alias in FAKE_SIGNERS else first(
        lambda obj, method, p: method == "addSignerCertificate" and p.get("keyStoreName") == "CMSKeyStore"
        and p.get("keyStoreScope") == WS_SCOPE and p.get("certificateAlias") == alias)
    changed = first(lambda obj, method, p: method == "changeKeyStorePassword" and p.get("keyStoreName") == "CMSKeyStore"
                    and p.get("scopeName") == WS_SCOPE and p.get("newKeyStorePassword") not in ("", KDB_OLD))
    problems = []
    if added is None:
        problems.append(f"the signer {alias} is not added to CMSKeyStore at {WS_SCOPE}")
    if changed is None:
        problems.append("the key database keeps IBM's default password")
    saved = first(lambda obj, method, p: (obj, method) == ("AdminConfig", "save"),
                  after=max(i for i in (added, changed, -1) if i is not None))
    if saved is None:
        problems.append("the change is not saved")
    propagated = first(lambda obj, method, p: method == "invoke" and p[1:4] == ["cell01", "node01", "webserver1"])
    if propagated is None:
        problems.append("the key database is never propagated to webserver1")
    elif saved is None or propagated < saved:
        problems.append("the key database is propagated before the change is saved")
    return problems


@pytest.mark.snippet(SIGNER, checker="jython-fake")
def test_plugin_signer_script_adds_the_signer_in_the_cell_changes_the_password_and_propagates(runs):
    """NOT RUN ON A CELL: the calls, against IBM's documented parameters (the fake refuses others)."""
    run = runs["signer"]
    made = calls(run)
    assert [(obj, method) for obj, method, _ in made] == [
        ("AdminControl", "getCell"), ("AdminConfig", "getid"), ("AdminTask", "listKeyStores"),
        ("AdminControl", "completeObjectName"), ("AdminTask", "listSignerCertificates"),
        ("AdminTask", "addSignerCertificate"), ("AdminTask", "changeKeyStorePassword"), ("AdminConfig", "save"),
        ("AdminControl", "completeObjectName"), ("AdminControl", "invoke"), ("AdminControl", "invoke")]
    parsed = {method: dict(p) for _, method, _, p in run["calls"] if method in ("addSignerCertificate",
                                                                                  "changeKeyStorePassword")}
    assert parsed["addSignerCertificate"] == {
        "keyStoreName": "CMSKeyStore", "keyStoreScope": WS_SCOPE, "certificateAlias": "was-ca",
        "certificateFilePath": f"{WSFAKE}/ca.pem", "base64Encoded": "true"}
    assert parsed["changeKeyStorePassword"] == {
        "keyStoreName": "CMSKeyStore", "scopeName": WS_SCOPE, "keyStorePassword": KDB_OLD,
        "newKeyStorePassword": KDB_NEW, "newKeyStorePasswordVerify": KDB_NEW}
    sync, propagate = [args for obj, method, args in made if method == "invoke"]
    assert "type=NodeSync" in sync[0]
    assert sync[1] == "sync"
    assert "type=PluginCfgGenerator" in propagate[0]
    assert propagate[1:] == ["propagateKeyring", f"{WSFAKE}/profile/config cell01 node01 webserver1"]
    assert plugin_keystore_problems(run) == []
    assert KDB_NEW not in run["stdout"]
    assert KDB_OLD not in run["stdout"]


@pytest.mark.snippet(SIGNER, checker="jython-fake")
def test_plugin_signer_script_takes_a_der_certificate_and_keeps_a_signer_it_has(runs):
    der = runs["signer-der"]
    assert plugin_keystore_problems(der, "was-ca-der") == []
    (added,) = [dict(p) for _, method, _, p in der["calls"] if method == "addSignerCertificate"]
    assert added["base64Encoded"] == "false"
    again = runs["signer-again"]
    assert plugin_keystore_problems(again, "root") == []
    assert "already holds a signer labelled root: keeping it" in again["stdout"]
    assert not [c for c in calls(again) if c[1] == "addSignerCertificate"]


REFUSALS = {  # case -> the sentence the script must say before it changes anything
    "signer-no-password": "Set PLUGIN_KDB_PASSWORD",
    "signer-default-as-new": "is the current password or IBM's default",
    "signer-missing-ca": f"Cannot read {WSFAKE}/no-such-ca.pem",
    "signer-private-key": "holds a private key: give the CA's certificate only",
    "signer-unknown-webserver": "No server webserver9 on node node01 in cell cell01",
    "signer-app-server": "No keystore CMSKeyStore at (cell):cell01:(node):node01:(server):server1",
    "signer-wrong-profile": "/tmp has no configuration of cell cell01",
}


@pytest.mark.negative("was/wsadmin/add-signer-to-plugin-keystore.py",
                      expects="each refusal stops the script before any change: Nothing was changed.")
@pytest.mark.parametrize("case", sorted(REFUSALS))
@pytest.mark.snippet(SIGNER, checker="jython-fake")
def test_plugin_signer_script_refuses_before_changing_anything(runs, case):
    run = runs[case]
    assert run["status"] == 1, run
    assert REFUSALS[case] in run["stdout"], run
    assert "Nothing was changed." in run["stdout"], run
    assert not [c for c in run["calls"] if c[1] in SIGNER_CHANGES], run


OUTCOME = {  # what the keystore check must name in each script the fake runs without complaint
    "signer-in-node-truststore.py": "the signer was-ca is not added to CMSKeyStore",
    "signer-not-propagated.py": "the key database is never propagated to webserver1",
    "signer-propagated-before-save.py": "the key database is propagated before the change is saved",
    "password-left-at-default.py": "the key database keeps IBM's default password",
}


@pytest.mark.parametrize("bad", BAD_OUTCOME)
@pytest.mark.snippet(SIGNER, checker="jython-fake")
def test_plugin_keystore_check_names_what_keeps_the_signer_from_the_plug_in(runs, bad):
    run = runs[f"bad/plugin-signer/{bad}"]
    assert run["status"] == 0, run  # every call is one the fake accepts
    assert not run["error"], run
    problems = plugin_keystore_problems(run)
    assert [p for p in problems if p.startswith(OUTCOME[bad])], problems


WHY = {  # what the fake must say about each negative case
    "save-misspelt.py": "AdminConfig has no method saveConfig",
    "set-heap-size-misspelt-parameter.py": "setJVMProperties has no parameter -initialHeapsize",
    "ssl-config-sslv3.py": "-sslProtocol 'SSLv3' is not one of",
    "ssl-config-unknown-suite.py": "unknown cipher suites ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA256']",
    "datasource-misspelt-property.py": "IBM's JDBC driver has no property 'sslConection'",
    "datasource-boolean-as-yes.py": "sslConnection takes true or false, not 'yes'",
    "keystore-type-as-provider-keystore.py": "-keyStoreType 'PKCS11IMPLKS' is not one of",
    "plugin-kdb-password-scope-as-keystorescope.py": "changeKeyStorePassword has no parameter -keyStoreScope",
    "plugin-kdb-propagate-without-config-root.py": "PluginCfgGenerator.propagateKeyring takes 4 arguments",
}


@pytest.mark.snippet(KEYSTORE, checker="jython-fake")
def test_token_keystore_script_creates_a_pkcs11_keystore_on_the_token_configuration(runs):
    """NOT RUN ON A CELL: the calls, against IBM's documented createKeyStore parameters (the fake refuses others)."""
    run = runs["keystore"]
    made = calls(run)
    assert [(obj, method) for obj, method, _ in made] == [
        ("AdminControl", "getCell"), ("AdminConfig", "getid"), ("AdminTask", "listKeyStores"),
        ("AdminTask", "createKeyStore"), ("AdminConfig", "save")]
    parsed = dict(next(p for _, method, _, p in run["calls"] if method == "createKeyStore"))
    assert parsed["keyStoreType"] == "PKCS11"
    assert parsed["keyStoreLocation"] == TOKEN_CFG
    assert parsed["keyStoreIsFileBased"] == "false"
    assert parsed["scopeName"] == "(cell):cell01:(node):node01"
    assert parsed["keyStorePassword"] == parsed["keyStorePasswordVerify"] == ENV["keystore"]["TOKEN_USER_PIN"]
    assert ENV["keystore"]["TOKEN_USER_PIN"] not in run["stdout"]


@pytest.mark.snippet(KEYSTORE, checker="jython-fake")
def test_token_keystore_script_changes_nothing_without_a_pin_or_for_an_unknown_node(runs):
    no_pin = runs["keystore-no-pin"]
    assert no_pin["status"] == 1, no_pin
    assert "Set TOKEN_USER_PIN" in no_pin["stdout"]
    assert no_pin["calls"] == []
    unknown = runs["keystore-unknown-node"]
    assert unknown["status"] == 1, unknown
    assert "No node node09" in unknown["stdout"]
    assert [c for c in unknown["calls"] if c[1] in ("createKeyStore", "save")] == []


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.snippet("was/wsadmin/*.py", checker="jython-fake")
def test_fake_rejects_the_mistake_in(runs, bad):
    run = runs[f"bad/{bad}"]
    assert run["status"] == 1, run
    assert WHY[bad] in run["error"], run
    assert not [c for c in run["calls"] if c[1] == "save"], run
