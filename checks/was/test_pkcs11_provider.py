"""The PKCS#11 token configuration files, loaded into OpenJDK 21's SunPKCS11 against openCryptoki.

SunPKCS11 reads the same file format as IBM's IBMPKCS11Impl (name, description, library, slot or
slotListIndex, disabledMechanisms) and is the strictest parser at hand. Each host gets a fresh container:
pkcsslotd started, a token initialised with the crypto chapter's init-token.sh (the ICA token on s390x, the
soft token on amd64), the user wasadmin added to pkcs11 with the crypto chapter's snippet, and then ONE JVM
(checks/standins/was/Pkcs11Check.java) loads every file as wasadmin: login with the user PIN from the environment,
an RSA key pair generated in the token, a signature, and every disabled mechanism proved absent.

What the containers cannot match, the test adapts openly: the library path a file names is linked to the
host's real openCryptoki library when it does not exist (the RHEL path on Debian, the s390x path on amd64,
SLES 11's PKCS11_API.so64), and on amd64, which has no ICA token, "slot = 1" is pointed at the soft token's
slot 3.
"""

import re
from pathlib import Path

import pytest

from checks.hosts.jsse import PKCS11_CHECK, SUNPKCS11_REJECTS, opencryptoki
from checks.hosts.steps import State
from checks.hosts.token import PINS, ready_token, slot_of
from checks.hosts.util import compile_java, copy_to, output
from zrunbook import ROOT, SNIPPETS

HERE = Path(__file__).resolve().parent

RHEL = "was/pkcs11/ica-token-rhel-sles.cfg"
DEBIAN = "was/pkcs11/ica-token-ubuntu-debian.cfg"
STUDY = "was/pkcs11/cex3config-2013.cfg"
BAD = sorted(p.name for p in (HERE / "bad").glob("*.cfg"))
_RESULTS: dict = {}


# The token steps made once and kept as an image (checks/hosts/plugin.py State); every test here is
# marked from_state(WAS_TOKEN), so fresh_host arrives with the token ready and pkcsslotd running.
def ready_token_and_checker(host) -> None:
    ready_token(host, "wasadmin")
    copy_to(host, (ROOT / PKCS11_CHECK).read_text(), "/tmp/pkcs11/Pkcs11Check.java")
    compile_java(host, "/tmp/pkcs11/Pkcs11Check.java")


WAS_TOKEN = State("was-token-checker", ready_token_and_checker, snippets=("crypto",), files=(PKCS11_CHECK,))
# a module-scoped fixture reads the page's PKCS #11 driver file, and ``results`` runs every file once per host
# (_RESULTS): their reads fall on whichever test of the module a worker runs first, so the module declares them
pytestmark = [pytest.mark.from_state(WAS_TOKEN),
              pytest.mark.uses("ihs/httpd/pkcs11-driver-*.conf", RHEL, DEBIAN, STUDY)]


def prepare(host):
    """The files as the JVM will read them on a host with the WAS token ready; returns {label: path}."""
    files = {}
    for rel in (RHEL, DEBIAN, STUDY):
        text = (SNIPPETS / rel).read_text()
        library = re.search(r"^library\s*=\s*(\S+)", text, re.M).group(1)
        host.run_expect([0], f"test -e {library} || "
                      f"{{ mkdir -p $(dirname {library}) && ln -s {opencryptoki(host)} {library}; }}")
        # on amd64 the soft token stands in for ICA (slot 1 in the files)
        text = re.sub(r"^slot = 1$", f"slot = {slot_of(host)}", text, flags=re.M)
        files[rel] = f"/tmp/pkcs11/{rel.rsplit('/', 1)[1]}"
        copy_to(host, text, files[rel])
    for name in BAD:
        files[f"bad/{name}"] = f"/tmp/pkcs11/bad/{name}"
        copy_to(host, (HERE / "bad" / name).read_text(), files[f"bad/{name}"])
    host.run_expect([0], "chmod -R a+rX /tmp/pkcs11")
    return files


def run_all(host):
    files = prepare(host)
    result = host.run(f"cd /tmp/pkcs11 && runuser -u wasadmin -- env TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} "
                      f"java -cp /tmp/pkcs11 Pkcs11Check {' '.join(files.values())}")
    assert result.rc == 0, output(result)
    sections, current = {}, None
    by_path = {v: k for k, v in files.items()}
    for line in result.stdout.splitlines():
        if line.startswith("== "):
            current = by_path[line[3:]]
            sections[current] = {"mechanism": {}}
        elif line.startswith("mechanism CKM_"):
            name, state = line[len("mechanism "):].split(": ", 1)
            sections[current]["mechanism"][name] = state
        elif current and ": " in line:
            key, value = line.split(": ", 1)
            sections[current][key] = value
    return sections


@pytest.fixture
def results(fresh_host):
    if fresh_host.zr_name not in _RESULTS:
        _RESULTS[fresh_host.zr_name] = run_all(fresh_host)
    return _RESULTS[fresh_host.zr_name]


def current_file(host_name):
    return DEBIAN if host_name == "debian13-s390x" else RHEL


@pytest.mark.uses("ihs/httpd/pkcs11-driver-ubuntu-debian.conf", "was/pkcs11/cex3config-2013.cfg")
@pytest.mark.arch_dependent("the ICA token and its library path on s390x")
@pytest.mark.snippet(RHEL, DEBIAN, checker="sunpkcs11")
def test_token_config_logs_in_and_generates_an_rsa_key_in_the_token(results, fresh_host):
    for rel in (RHEL, DEBIAN):
        got = results[rel]
        assert "error" not in got, got.get("error")
        assert got["provider"] == "SunPKCS11-IBMICATOK", got
        assert got["login"] == "ok", got
        assert "RSA private key, 2048 bits" in got["rsa-key"], got
        assert "sensitive, unextractable" in got["rsa-key"], got  # the attributes block
        assert got["sign-verify"] == "ok", got


@pytest.mark.snippet(RHEL, DEBIAN, checker="sunpkcs11")
def test_token_config_leaves_every_disabled_mechanism_unused(results, fresh_host):
    got = results[current_file(fresh_host.zr_name)]
    disabled = got["disabled"].split()
    assert len(disabled) == 7, got
    assert set(got["mechanism"]) == set(disabled), got
    assert all(state.startswith("absent") for state in got["mechanism"].values()), got["mechanism"]
    assert not set(disabled) & set(got["mechanisms"].split()), got
    if fresh_host.zr_name == "debian13-amd64":  # the soft token offers them all: the block really removes them
        assert all(state == "absent (token offers it)" for state in got["mechanism"].values()), got["mechanism"]


@pytest.mark.uses("ihs/httpd/pkcs11-driver-ubuntu-debian.conf", "was/pkcs11/ica-token-rhel-sles.cfg",
                  "was/pkcs11/ica-token-ubuntu-debian.cfg")
@pytest.mark.snippet(STUDY, checker="sunpkcs11")
def test_2013_config_finds_no_token_at_slot_list_index_0_today(results, fresh_host):
    got = results[STUDY]
    assert "CKR_TOKEN_NOT_PRESENT" in got.get("error", ""), got


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.snippet(STUDY, RHEL, DEBIAN, checker="sunpkcs11")
def test_sunpkcs11_rejects_the_config_mistake_in(results, fresh_host, bad):
    got = results[f"bad/{bad}"]
    assert SUNPKCS11_REJECTS[bad] in got.get("error", ""), got
