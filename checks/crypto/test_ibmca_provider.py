"""The ibmca provider step of the libraries page: its OpenSSL configuration and its check snippet.

The s390x host has openssl-ibmca 2.5.0 (the OpenSSL 3 provider) and libica4 from Debian sid, pinned so
that nothing else comes from there (checks/hosts/Containerfile); Debian 13's own openssl-ibmca 1.4 is an
engine for OpenSSL 1.0.2. One checker function, ``problems(provider_state(host, conf))``, judges every
configuration here: the snippet's must load the default and the ibmca provider, both active, and keep an
ordinary algorithm (SHA-256) working; the configuration that ``ibmca-provider-opensslconfig`` writes
(the default provider's ``activate`` left commented out) must fail it.

Under qemu there is no Crypto Express adapter, so libica offers ibmca nothing and the provider registers
no algorithm: these checks prove the loading, never the offload. amd64 has no ibmca module at all.
"""

import re
import shlex

import pytest

from checks.hosts.engine import REPO
from checks.hosts.steps import run_snippet, snippet_path
from checks.hosts.util import copy_to, output
from zrunbook import SNIPPETS
from zrunbook.shown_output import assert_shown_output

CONF = "crypto/libraries/openssl-ibmca-provider.conf"
CHECK = "crypto/libraries/check-ibmca-provider.sh"
CHECK_OUT = "crypto/libraries/check-ibmca-provider.out"
BAD = "checks/crypto/bad/openssl-ibmca-provider-opensslconfig.conf"

S390X = pytest.mark.only_hosts("debian13-s390x")
AMD64 = pytest.mark.only_hosts("debian13-amd64", why="there is no ibmca module off IBM Z: these check that answer")


def bad_conf() -> str:
    return (REPO / BAD).read_text(encoding="utf-8")


def active_providers(listing: str) -> set[str]:
    """The providers `openssl list -providers [-verbose]` reports with status active."""
    active, name = set(), None
    for line in listing.splitlines():
        if re.match(r"^  \S", line):
            name = line.strip()
        elif name and re.match(r"^    status: active$", line):
            active.add(name)
    return active


def provider_state(host, conf: str) -> dict:
    """What OpenSSL on the host does with the configuration file conf (a path inside the container)."""
    env = f"OPENSSL_CONF={shlex.quote(conf)}"
    listing = host.run(f"{env} openssl list -providers -verbose")
    digest = host.run(f"{env} openssl dgst -sha256 /etc/hostname")
    return {"loads": listing.rc == 0, "active": active_providers(listing.stdout), "sha256": digest.rc == 0,
            "output": output(listing) + output(digest)}


def problems(state: dict) -> list[str]:
    """The checker: both providers active and SHA-256 working, or the list of what is wrong."""
    found = [] if state["loads"] else ["OpenSSL cannot load the configuration"]
    found += [f"the {name} provider is not active" for name in ("default", "ibmca") if name not in state["active"]]
    if not state["sha256"]:
        found.append("SHA-256 fails")
    return found


# --- the host itself ---------------------------------------------------------------------------------


@S390X
def test_the_s390x_host_has_the_ibmca_provider_from_sid_and_keeps_libica3(host):
    versions = dict(line.split("\t") for line in host.check_output(
        "dpkg-query -W -f='${Package}\\t${Version}\\n' openssl-ibmca libica4 libica3 libica-utils").splitlines())
    assert versions["openssl-ibmca"].startswith("2."), versions
    assert versions["libica4"].startswith("4."), versions
    assert versions["libica3"].startswith("3.9"), versions  # the other checks' libica stays
    assert versions["libica-utils"].startswith("3.9"), versions
    assert host.file("/usr/lib/s390x-linux-gnu/ossl-modules/ibmca-provider.so").exists


@S390X
def test_icastats_of_debian_13s_libica_3_9_has_no_json_output(host):
    """The CPACF page says so: -j arrived with libica 4's tools."""
    result = host.run("icastats -j")
    assert result.rc != 0, output(result)
    assert "invalid option" in result.stderr, output(result)


# --- the configuration, through the checker ---------------------------------------------------------


@S390X
@pytest.mark.snippet(CONF, checker="testinfra")
def test_provider_config_activates_default_and_ibmca_and_sha256_still_works(host):
    state = provider_state(host, snippet_path(CONF))
    assert problems(state) == [], state["output"]


@S390X
@pytest.mark.snippet(CONF, checker="testinfra")
def test_ibmca_registers_no_algorithm_without_an_adapter(host):
    """Under qemu libica has no adapter: ibmca loads but takes over nothing (the page says so)."""
    env = f"OPENSSL_CONF={snippet_path(CONF)}"
    debug = host.run(f"IBMCA_DEBUG=stderr {env} openssl list -providers")
    assert debug.rc == 0, output(debug)
    for algorithm in ("RSA", "EC", "DH"):
        assert f"algo '{algorithm}' not supported by libica" in debug.stderr, output(debug)
        assert f"algorithm '{algorithm}' enabled: 0" in debug.stderr, output(debug)
    managers = host.check_output(f"{env} openssl list -key-managers")
    assert "@ ibmca" not in managers
    assert "RSA, rsaEncryption } @ default" in managers


@S390X
@pytest.mark.snippet(CONF, checker="testinfra")
def test_config_that_leaves_the_default_provider_inactive_fails_the_check(fresh_host):
    """Negative case of the checker: ibmca alone has no digests, so SHA-256 fails."""
    copy_to(fresh_host, bad_conf(), "/tmp/bad/openssl.cnf")
    state = provider_state(fresh_host, "/tmp/bad/openssl.cnf")
    assert state["active"] == {"ibmca"}, state["output"]
    assert problems(state) == ["the default provider is not active", "SHA-256 fails"]


@pytest.mark.negative("crypto/libraries/openssl-ibmca-provider.conf",
                      expects="the helper's generated file fails the same way: the default provider is not active, "
                              "SHA-256 fails")
@S390X
@pytest.mark.snippet(CONF, checker="testinfra")
def test_ibmca_provider_opensslconfig_output_fails_the_same_check(fresh_host):
    """The helper's own output (from Debian 13's openssl.cnf) is the bad file's origin: it fails the same way."""
    fresh_host.run_expect([0], "mkdir -p /tmp/generated && cd /tmp/generated && ibmca-provider-opensslconfig")
    generated = "/tmp/generated/openssl.cnf.ibmca-provider"
    assert fresh_host.run(f"grep -qx '# activate = 1' {generated}").rc == 0
    assert problems(provider_state(fresh_host, generated)) == ["the default provider is not active", "SHA-256 fails"]


@pytest.mark.negative("crypto/libraries/openssl-ibmca-provider.conf",
                      expects="with fips = yes ibmca does not start: libica is not running in FIPS mode")
@S390X
@pytest.mark.snippet(CONF, checker="testinfra")
def test_ibmca_reads_fips_no_and_would_refuse_fips_yes_on_debians_libica(fresh_host):
    """The configuration's fips = no reaches the provider (its debug output: fips 0) and ibmca stays active. The
    same file with fips = yes makes ibmca refuse to start, because Debian's libica has no FIPS mode: so the line
    is read, not ignored. (Whether ibmca would join fips=yes queries without the line depends on a libica in FIPS
    mode, which no host here has.)"""
    env = f"OPENSSL_CONF={snippet_path(CONF)}"
    debug = fresh_host.run(f"IBMCA_DEBUG=stderr {env} openssl list -providers")
    assert debug.rc == 0, output(debug)
    assert re.search(r"\bfips: 0\b", debug.stderr), output(debug)
    assert problems(provider_state(fresh_host, snippet_path(CONF))) == []
    text = (SNIPPETS / CONF).read_text(encoding="utf-8")
    assert "\nfips = no\n" in text
    copy_to(fresh_host, text.replace("\nfips = no\n", "\nfips = yes\n"), "/tmp/y/o.cnf")
    yes = fresh_host.run("IBMCA_DEBUG=stderr OPENSSL_CONF=/tmp/y/o.cnf openssl list -providers")
    assert "'fips=yes' is configured, but libica is not running in FIPS mode" in output(yes)
    assert "ibmca" not in active_providers(yes.stdout), output(yes)


@AMD64
@pytest.mark.snippet(CONF, checker="testinfra")
def test_on_amd64_the_config_loads_only_the_default_provider(host):
    """No ibmca module off IBM Z: OpenSSL skips the provider without an error, so only the check notices."""
    state = provider_state(host, snippet_path(CONF))
    assert state["loads"], state["output"]
    assert problems(state) == ["the ibmca provider is not active"]


@S390X
@pytest.mark.snippet(CONF, checker="testinfra")
def test_on_ibm_z_a_missing_module_is_skipped_silently_too(fresh_host):
    """As without the package: OpenSSL runs with the default provider alone and says nothing."""
    text = (SNIPPETS / CONF).read_text(encoding="utf-8")
    copy_to(fresh_host, text.replace("module = ibmca-provider.so", "module = no-such-provider.so"), "/tmp/m/o.cnf")
    state = provider_state(fresh_host, "/tmp/m/o.cnf")
    assert state["loads"], state["output"]
    assert problems(state) == ["the ibmca provider is not active"]


# --- the check snippet ------------------------------------------------------------------------------


@S390X
@pytest.mark.snippet(CHECK, CHECK_OUT, CONF, checker="output-regenerated")
def test_check_snippet_reports_both_providers_and_no_offload_without_an_adapter(host):
    result = run_snippet(host, CHECK, snippet_path(CONF))
    assert result.rc == 0, output(result)
    assert "active providers: default ibmca" in result.stdout
    assert_shown_output(CHECK_OUT, result.stdout)


@pytest.mark.negative("crypto/libraries/check-ibmca-provider.sh",
                      expects="the check stops: Only ibmca is active: set activate = 1 in the default provider's "
                              "section")
@S390X
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_check_snippet_stops_when_only_ibmca_is_active(fresh_host):
    copy_to(fresh_host, bad_conf(), "/etc/ssl/openssl-ibmca-provider.conf")
    result = run_snippet(fresh_host, CHECK)
    assert result.rc == 1, output(result)
    assert "Only ibmca is active: set activate = 1 in the default provider's section" in result.stderr


@S390X
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_check_snippet_names_the_missing_configuration(host):
    result = run_snippet(host, CHECK, "/etc/ssl/no-such.conf")
    assert result.rc == 1, output(result)
    assert "Cannot read /etc/ssl/no-such.conf" in result.stderr


@AMD64
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_check_snippet_says_the_provider_needs_ibm_z(host):
    result = run_snippet(host, CHECK, snippet_path(CONF))
    assert result.rc == 1, output(result)
    assert "not IBM Z: the ibmca provider exists only for s390x" in result.stderr


ENGINE = "crypto/libraries/openssl-ibmca-engine-sles15.conf"
ENGINE_SO = "/usr/lib64/engines-1.1/ibmca.so"  # the path the configuration names (SLES's library folder)


def engine_listing(host, conf_text: str) -> str:
    copy_to(host, conf_text, "/tmp/openssl-ibmca-engine.conf")
    return output(host.run("OPENSSL_CONF=/tmp/openssl-ibmca-engine.conf openssl engine -t"))


@S390X
@pytest.mark.snippet(ENGINE, checker="testinfra")
def test_engine_configuration_loads_the_ibmca_engine(fresh_host):
    # The engine of openssl-ibmca 2.5.0 (Debian sid) links libcrypto.so.3, so Debian 13's OpenSSL 3.5 loads it
    # through the same configuration form OpenSSL 1.1.1 reads; the path SLES uses is linked to Debian's file.
    # Under qemu there is no adapter: this proves the configuration loads the engine, not any offload.
    fresh_host.run_expect([0], f"mkdir -p {ENGINE_SO.rsplit('/', 1)[0]} && "
                          f"ln -sf /usr/lib/s390x-linux-gnu/engines-1.1/ibmca.so {ENGINE_SO}")
    listing = engine_listing(fresh_host, (SNIPPETS / ENGINE).read_text(encoding="utf-8"))
    assert "(ibmca)" in listing, listing
    assert "[ available ]" in listing.split("(ibmca)", 1)[1].split("(", 1)[0], listing


@pytest.mark.negative("crypto/libraries/openssl-ibmca-engine-sles15.conf",
                      expects="with nothing at the engine path the ibmca engine is not listed or is unavailable")
@S390X
@pytest.mark.snippet(ENGINE, checker="testinfra")
def test_engine_check_fails_when_the_engine_is_not_where_the_configuration_says(fresh_host):
    # Negative case: the same file on a host where nothing is at the path it names (no link made).
    listing = engine_listing(fresh_host, (SNIPPETS / ENGINE).read_text(encoding="utf-8"))
    assert "(ibmca)" not in listing or "[ unavailable ]" in listing, listing
