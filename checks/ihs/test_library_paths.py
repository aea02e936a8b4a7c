"""One openCryptoki library path per distribution across the IHS chapter, and the snippets find it.

Debian and Ubuntu install openCryptoki's PKCS#11 module as /usr/lib/<triplet>/pkcs11/libopencryptoki.so
(package opencryptoki, beside the other PKCS#11 modules; a link to the versioned library of
libopencryptoki0); RHEL and SLES as /usr/lib64/opencryptoki/libopencryptoki.so. Configuration files name
one of them (a file per distribution), shell snippets look for both. These checks tie them together:

* static: every script that looks for the library looks for exactly the paths the distributions' files
  name, the WAS token configuration agrees, the two OpenSSL configurations differ in that path only, and
  no snippet or page names another Ubuntu/Debian form;
* on the hosts (Debian): the GSKit steps, run with a recording stand-in for GSKit (which cannot be
  installed), pass the Ubuntu/Debian library to GSKit without being told, and say where they looked when
  there is none; the RHEL/SLES OpenSSL configuration loads, and the key step refuses it on Debian because
  the library it names is not there.
"""

import re

import pytest

from checks.hosts.apache import OPENSSL_PKCS11_CONF, put
from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.token import PINS
from zrunbook.ihs.distro_paths import (
    DISTROS,
    SNIPPETS,
    current_conf,
    driver_fragment,
    included,
    library,
    module_path,
    on_host,
    openssl_config,
)

FINDERS = ("ihs/gskit/create-token-certificate.sh", "ihs/gskit/list-token-certificates.sh",
           "ihs/apache/create-token-key-and-csr.sh")
FILES = ("ihs/httpd/pkcs11-driver-*.conf", "ihs/apache/openssl-pkcs11-provider-*.conf")
WAS_TOKEN = "was/pkcs11/ica-token-{}.cfg"
GSKIT = "/opt/IBM/HTTPServer/bin/gskcapicmd"  # the scripts' default: IHS_ROOT/bin/gskcapicmd


def text(rel):
    return (SNIPPETS / rel).read_text(encoding="utf-8")


@pytest.mark.uses("was/pkcs11/ica-token-rhel-sles.cfg", "was/pkcs11/ica-token-ubuntu-debian.cfg")
@pytest.mark.snippet(*FILES, checker="pkcs11-library-paths")
@pytest.mark.parametrize("distro", DISTROS)
def test_openssl_and_was_token_configurations_name_the_library_the_ihs_driver_names(distro):
    assert module_path(openssl_config(distro)) == library(distro)
    was = re.search(r"^library\s*=\s*(\S+)\s*$", text(WAS_TOKEN.format(distro)), re.M).group(1)
    assert was == library(distro)


@pytest.mark.snippet("ihs/httpd/httpd-ssl-current.conf", "ihs/httpd/pkcs11-driver-*.conf",
                     checker="pkcs11-library-paths")
@pytest.mark.parametrize("distro", DISTROS)
def test_ihs_driver_says_to_save_it_where_the_current_configuration_includes_it(distro):
    assert f"Save as /opt/IBM/HTTPServer/{included(current_conf())}:" in driver_fragment(distro)


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet("ihs/apache/openssl-pkcs11-provider-*.conf", checker="pkcs11-library-paths")
def test_the_two_openssl_configurations_differ_only_in_the_library_path_and_the_system_file():
    def settings(distro):
        return [line for line in openssl_config(distro).splitlines()
                if line.strip() and not line.startswith(("#", ".include")) and line != "[default]"]

    def includes(distro):
        return [line for line in openssl_config(distro).splitlines() if line.startswith(".include")
                or line == "[default]"]

    # the system openssl.cnf each includes first (issue 16, finding 5): RHEL's and SLES's places, with a return to
    # the default section between them (test_openssl_policy.py shows why), Debian's
    assert includes("rhel-sles") == [".include /etc/pki/tls/openssl.cnf", "[default]", ".include /etc/ssl/openssl.cnf"]
    assert includes("ubuntu-debian") == [".include /etc/ssl/openssl.cnf"]
    rhel, debian = settings("rhel-sles"), settings("ubuntu-debian")
    assert len(rhel) == len(debian)
    assert [(a, b) for a, b in zip(rhel, debian, strict=True) if a != b] == [
        (f"pkcs11-module-path = {library('rhel-sles')}", f"pkcs11-module-path = {library('ubuntu-debian')}")]


DEBIAN_FORM = re.compile(r"/usr/lib/[^/\s\"']+/pkcs11/libopencryptoki\.so")


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
@pytest.mark.snippet(*FINDERS, *FILES, checker="pkcs11-library-paths")
def test_no_snippet_or_page_names_another_ubuntu_debian_library_path():
    """The Ubuntu/Debian soname path (.../opencryptoki/libopencryptoki.so.0) once stood in one chapter."""
    named = []
    for path in [*sorted(SNIPPETS.rglob("*")), *sorted((SNIPPETS.parent / "docs").rglob("*.md"))]:
        if path.is_file():
            for m in re.finditer(r"/usr/lib/(?!pkcs11/PKCS11_API)[^\s\"'`|;)]*libopencryptoki[^\s\"'`|;)]*",
                                 path.read_text(encoding="utf-8", errors="replace").replace("$(uname -m)", "s390x")):
                named.append((path.relative_to(SNIPPETS.parent).as_posix(), m.group(0)))
    assert named, "no Ubuntu/Debian library path found at all"
    assert [(f, p) for f, p in named if not DEBIAN_FORM.fullmatch(p)] == []


def recording_gskit(host):
    """GSKit cannot be installed: a stand-in at IHS's path records its arguments and lists no certificate."""
    host.run_expect([0], f"mkdir -p {GSKIT.rsplit('/', 1)[0]} && printf '%s\\n' '#!/bin/sh' "
                  f"'echo \"$*\" >> /tmp/gskit-calls' > {GSKIT} && chmod 755 {GSKIT}")


def crypto_values(host):
    calls = host.file("/tmp/gskit-calls").content_string.splitlines()
    return [c.split()[c.split().index("-crypto") + 1] for c in calls]


@pytest.mark.uses("ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.arch_dependent("the library path is the architecture's multiarch folder")
@pytest.mark.snippet("ihs/gskit/create-token-certificate.sh", "ihs/gskit/list-token-certificates.sh",
                     checker="testinfra")
def test_gskit_steps_pass_gskit_the_library_the_ubuntu_debian_driver_names(fresh_host):
    recording_gskit(fresh_host)
    start_pkcsslotd(fresh_host)
    for step in ("create-token-certificate.sh", "list-token-certificates.sh"):
        result = fresh_host.run(f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} bash {snippet_path('ihs/gskit/' + step)}")
        assert result.rc == 0, result.stdout + result.stderr
    crypto = crypto_values(fresh_host)
    assert len(crypto) == 5  # create: -list, -create, -details; list: -list, -details
    assert set(crypto) == {on_host(fresh_host, library("ubuntu-debian"))}


@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf", "ihs/httpd/pkcs11-driver-ubuntu-debian.conf")
@pytest.mark.snippet("ihs/gskit/create-token-certificate.sh", "ihs/gskit/list-token-certificates.sh",
                     checker="testinfra")
def test_gskit_steps_without_opencryptoki_name_both_library_paths(fresh_host):
    recording_gskit(fresh_host)
    fresh_host.run_expect([0], f"rm {on_host(fresh_host, library('ubuntu-debian'))}")
    for step in ("create-token-certificate.sh", "list-token-certificates.sh"):
        result = fresh_host.run(f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} bash {snippet_path('ihs/gskit/' + step)}")
        assert result.rc == 1, result.stdout + result.stderr
        assert f"RHEL/SLES have {library('rhel-sles')}" in result.stderr
        assert f"Ubuntu/Debian {on_host(fresh_host, library('ubuntu-debian'))}" in result.stderr
    assert not fresh_host.file("/tmp/gskit-calls").exists


@pytest.mark.negative("ihs/apache/openssl-pkcs11-provider-rhel-sles.conf", "ihs/apache/create-token-key-and-csr.sh",
                      expects="on Debian the key step stops: the configuration names a library which does not exist "
                              "here")
@pytest.mark.uses("ihs/httpd/pkcs11-driver-rhel-sles.conf")
@pytest.mark.snippet("ihs/apache/openssl-pkcs11-provider-rhel-sles.conf", "ihs/apache/create-token-key-and-csr.sh",
                     checker="testinfra")
def test_rhel_sles_openssl_configuration_parses_but_the_key_step_refuses_it_on_debian(fresh_host):
    """pkcs11-provider opens its module only on first use, so OpenSSL accepts the file; the key step
    checks the library it names before it writes anything."""
    put(fresh_host, OPENSSL_PKCS11_CONF, openssl_config("rhel-sles"))
    key_step = snippet_path("ihs/apache/create-token-key-and-csr.sh")
    result = fresh_host.run(f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} bash {key_step}")
    assert result.rc == 1, result.stdout + result.stderr
    assert f"names the library '{library('rhel-sles')}', which does not exist here" in result.stderr
    assert not fresh_host.file("/etc/ssl/private/apache-token.pin").exists
    # the provider activates once its PIN file exists (test data)
    fresh_host.run_expect([0], f"mkdir -p /etc/ssl/private && printf {PINS['TOKEN_USER_PIN']} "
                        "> /etc/ssl/private/apache-token.pin")
    providers = fresh_host.run(f"OPENSSL_CONF={OPENSSL_PKCS11_CONF} openssl list -providers")
    assert providers.rc == 0, providers.stderr
    assert re.search(r"^  pkcs11\n\s+name: PKCS#11 Provider\n.*\n\s+status: active", providers.stdout, re.M), \
        providers.stdout
