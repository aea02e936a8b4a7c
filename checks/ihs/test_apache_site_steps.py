"""The OpenSSL page's own steps on Debian (install, test CA, site) stop with a sentence on bad input, and the
token page's key step names this machine's library folder when the Ubuntu/Debian file names IBM Z's.

Their good path runs in every Apache check (checks/hosts/apache.py starts httpd with them) and in the
IHS chapter's walkthrough on a clean host (checks/walkthrough/).
"""

from pathlib import Path

import pytest

from checks.hosts.apache import OPENSSL_PKCS11_CONF, put, serve_files
from checks.hosts.steps import snippet_path
from checks.hosts.token import PINS
from checks.hosts.util import output
from zrunbook.ihs.distro_paths import on_host, openssl_config

SITE_STEP = "ihs/apache/enable-tls-site-debian.sh"
TEST_CA = "ihs/apache/test-ca.sh"
KEY_STEP = "ihs/apache/create-token-key-and-csr.sh"
INSTALL_PROVIDER = "ihs/apache/install-pkcs11-provider-debian.sh"
SITE = "/etc/apache2/sites-available/tls.conf"
BAD = Path(__file__).resolve().parent / "bad"
# An old httpd that stops the way httpd does: on SIGTERM it removes its PID file first and closes its listening
# sockets only as its parent process ends (here 3 s later; under load a real httpd's gap was enough, once).
SLOW_TO_END = r"""
import os, signal, socket, time
held = []
for port in (80, 443):
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::", port))
    s.listen()
    held.append(s)
def stop(*_):
    os.unlink("/run/apache2/apache2.pid")
    time.sleep(3)
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
open("/run/apache2/apache2.pid", "w").write(f"{os.getpid()}\n")
signal.pause()
"""


@pytest.mark.negative("ihs/apache/enable-tls-site-debian.sh", expects="the site step stops when no site was saved")
@pytest.mark.snippet(SITE_STEP, checker="testinfra")
def test_the_site_step_stops_when_no_site_was_saved(fresh_host):
    fresh_host.run_expect([0], f"rm -f {SITE}")
    result = fresh_host.run(f"bash {snippet_path(SITE_STEP)}")
    assert result.rc == 1, output(result)
    assert "save the site configuration there first" in result.stderr


@pytest.mark.uses("ihs/apache/apache-tls-openssl.conf")
@pytest.mark.negative("ihs/apache/enable-tls-site-debian.sh",
                      expects="the site step stops when the certificate the site names is missing")
@pytest.mark.snippet(SITE_STEP, checker="testinfra")
def test_the_site_step_stops_when_the_certificate_the_site_names_is_missing(fresh_host):
    fresh_host.run_expect([0], f"cp {snippet_path('ihs/apache/apache-tls-openssl.conf')} {SITE}"
                               " && rm -f /etc/ssl/certs/www.example.com.crt")
    result = fresh_host.run(f"bash {snippet_path(SITE_STEP)}")
    assert result.rc == 1, output(result)
    assert "names the certificate '/etc/ssl/certs/www.example.com.crt', which does not exist" in result.stderr
    assert fresh_host.run("test -e /etc/apache2/sites-enabled/tls.conf").rc == 1  # nothing enabled


@pytest.mark.snippet(SITE_STEP, checker="testinfra")
def test_the_site_step_restarts_a_running_httpd_without_an_error_message(fresh_host):
    """Run again after a change, as the page says: httpd stops and starts, and nothing on the way prints an error
    (an earlier version printed "cat: /run/apache2/apache2.pid: No such file or directory" at each restart)."""
    serve_files(fresh_host, "ihs/apache/apache-tls-openssl.conf")
    before = fresh_host.file("/run/apache2/apache2.pid").content_string.strip()
    for _ in range(3):
        again = fresh_host.run(f"bash {snippet_path(SITE_STEP)}")
        assert again.rc == 0, output(again)
        assert "No such file or directory" not in again.stdout + again.stderr, output(again)
        assert again.stdout.strip().endswith(f"httpd serves {SITE}"), output(again)
    assert fresh_host.file("/run/apache2/apache2.pid").content_string.strip() != before  # a new httpd


@pytest.mark.negative("ihs/apache/enable-tls-site-debian.sh",
                      expects="an httpd that cannot start is named with the end of its error log (walkthrough L3)")
@pytest.mark.snippet(SITE_STEP, checker="testinfra")
def test_the_site_step_shows_the_error_log_when_httpd_cannot_start(fresh_host):
    """A site whose key does not match its certificate passes apache2ctl -t but stops httpd at its start, as the
    token site at USER_PIN_FINAL_TRY does: apache2ctl start fails, and the step used to end there under set -e with
    only "Syntax OK", the reason left in the error log."""
    serve_files(fresh_host, "ihs/apache/apache-tls-openssl.conf")
    fresh_host.run_expect([0], "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256"
                               " -out /etc/ssl/private/www.example.com.key")
    result = fresh_host.run(f"bash {snippet_path(SITE_STEP)}")
    assert result.rc == 1, output(result)
    assert "httpd did not start; the end of its error log:" in result.stderr, output(result)
    assert "do not match" in result.stderr, output(result)  # mod_ssl AH02565, the reason itself


def _stand_in_httpd(host, name: str, program: str) -> str:
    """httpd stopped, and the Python program `program` (saved as /tmp/NAME.py) in its place with its PID file;
    returns that PID."""
    host.run_expect([0], "apache2ctl stop; for i in $(seq 100); do pgrep -x apache2 >/dev/null || "
                         f"pgrep -f '{name}[.]py' >/dev/null || exit 0; sleep 0.1; done; exit 1")
    put(host, f"/tmp/{name}.py", program)
    host.run_expect([0], f"setsid python3 /tmp/{name}.py </dev/null >/tmp/{name}.log 2>&1 & "
                         "for i in $(seq 100); do test -s /run/apache2/apache2.pid && exit 0; sleep 0.1; done; "
                         f"cat /tmp/{name}.log; exit 1")
    return host.file("/run/apache2/apache2.pid").content_string.strip()


def _slow_to_end_httpd(host) -> str:
    """httpd stopped, and SLOW_TO_END holding its ports and its PID file in its place; returns that PID."""
    return _stand_in_httpd(host, "slow-to-end", SLOW_TO_END)


@pytest.mark.snippet(SITE_STEP, checker="testinfra")
def test_the_site_step_starts_httpd_only_once_the_old_one_has_ended(fresh_host):
    """The old httpd removes its PID file before it frees its ports: the step waits for the process itself, so the
    start after it does not fail with "Address already in use". Negative: the step as it was waited for the file."""
    serve_files(fresh_host, "ihs/apache/apache-tls-openssl.conf")
    _slow_to_end_httpd(fresh_host)
    put(fresh_host, "/tmp/old-site-step.sh", (BAD / "enable-tls-site-debian-waits-for-the-pid-file.sh").read_text())
    old = fresh_host.run("bash /tmp/old-site-step.sh")
    assert old.rc == 1, output(old)
    assert "Address already in use" in old.stderr, output(old)
    stand_in = _slow_to_end_httpd(fresh_host)
    again = fresh_host.run(f"bash {snippet_path(SITE_STEP)}")
    assert again.rc == 0, output(again)
    assert again.stdout.strip().endswith(f"httpd serves {SITE}"), output(again)
    assert fresh_host.file("/run/apache2/apache2.pid").content_string.strip() != stand_in
    fresh_host.run_expect([0], "pgrep -x apache2")


# An httpd stuck in its exit, as one CI run saw once (the log's last line AH00491, the process alive 30 s later):
# on SIGTERM it logs the end of its shutdown, removes its PID file and does not end.
STUCK_IN_EXIT = r"""
import os, signal, time
def stop(*_):
    with open("/var/log/apache2/error.log", "a") as log:
        log.write("[mpm_event:notice] [pid %d] AH00491: caught SIGTERM, shutting down\n" % os.getpid())
    os.unlink("/run/apache2/apache2.pid")
    time.sleep(600)
signal.signal(signal.SIGTERM, stop)
open("/run/apache2/apache2.pid", "w").write(f"{os.getpid()}\n")
signal.pause()
"""


@pytest.mark.snippet(SITE_STEP, checker="testinfra")
def test_the_site_step_names_an_httpd_stuck_in_its_exit_and_how_to_end_it(fresh_host):
    """The step's advice for an httpd that finished its shutdown but did not end, tested from that state: it starts
    no second httpd, says so, and 'kill -KILL' followed by the step again serves the site."""
    serve_files(fresh_host, "ihs/apache/apache-tls-openssl.conf")
    stuck = _stand_in_httpd(fresh_host, "stuck-in-exit", STUCK_IN_EXIT)
    result = fresh_host.run(f"bash {snippet_path(SITE_STEP)}")
    assert result.rc == 1, output(result)
    advice = f"end it with 'kill -KILL {stuck}' and run this again."
    assert advice in " ".join(result.stderr.split()), output(result)
    assert fresh_host.run("pgrep -x apache2").rc == 1  # no second httpd was started
    fresh_host.run_expect([0], f"kill -KILL {stuck}")
    again = fresh_host.run(f"bash {snippet_path(SITE_STEP)}")
    assert again.rc == 0, output(again)
    assert again.stdout.strip().endswith(f"httpd serves {SITE}"), output(again)

@pytest.mark.snippet(TEST_CA, checker="testinfra")
def test_the_test_ca_signs_a_certificate_openssl_verifies_for_the_name(fresh_host):
    made = fresh_host.run_expect([0], f"SERVER_NAME=tls.example.org bash {snippet_path(TEST_CA)} certificate")
    assert "/root/test-ca/ca.crt" in made.stdout, output(made)
    fresh_host.run_expect([0], "openssl verify -CAfile /root/test-ca/ca.crt -verify_hostname tls.example.org "
                               "/etc/ssl/certs/tls.example.org.crt")
    assert fresh_host.file("/etc/ssl/private/tls.example.org.key").mode == 0o600
    assert fresh_host.file("/root/test-ca/ca.key").mode == 0o600


@pytest.mark.snippet(TEST_CA, checker="testinfra")
@pytest.mark.parametrize(("args", "message"), [
    ("", "Usage:"),
    ("sign", "Usage:"),
    ("sign /nonexistent.csr", "Cannot read the certificate request /nonexistent.csr."),
])
@pytest.mark.negative("ihs/apache/test-ca.sh", expects="the test CA stops on a wrong command line")
def test_the_test_ca_stops_on_a_wrong_command_line(fresh_host, args, message):
    result = fresh_host.run(f"bash {snippet_path(TEST_CA)} {args}")
    assert result.rc in (1, 2), output(result)
    assert message in result.stderr
    assert fresh_host.run("test -e /root/test-ca").rc == 1  # stopped before making anything


@pytest.mark.uses("ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf")
@pytest.mark.only_hosts("debian13-amd64", why="it checks the sentence that names the x86_64 library folder")
@pytest.mark.snippet(KEY_STEP, checker="testinfra")
def test_the_key_step_names_this_machines_library_when_the_file_names_ibm_zs(fresh_host):
    """The reader's stumble: on amd64 the step blamed 'the other distribution's file'."""
    put(fresh_host, OPENSSL_PKCS11_CONF, openssl_config("ubuntu-debian"))  # byte for byte: IBM Z's folder
    result = fresh_host.run(f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} bash {snippet_path(KEY_STEP)}")
    assert result.rc == 1, output(result)
    assert ("the folder of another architecture; on this x86_64 machine it is "
            "'/usr/lib/x86_64-linux-gnu/pkcs11/libopencryptoki.so'") in result.stderr, output(result)


@pytest.mark.uses("ihs/apache/openssl-pkcs11-provider-ubuntu-debian.conf")
@pytest.mark.snippet(KEY_STEP, checker="testinfra")
def test_the_key_step_says_to_install_pkcs11_provider_when_it_does_not_load(fresh_host):
    """The s390x walk's stumble: the page assumed the package, no step installed it, and openssl req then
    said only 'No store loader found'."""
    put(fresh_host, OPENSSL_PKCS11_CONF, on_host(fresh_host, openssl_config("ubuntu-debian")))
    modules = fresh_host.check_output("openssl version -m").split('"')[1]  # MODULESDIR: "/usr/lib/.../ossl-modules"
    fresh_host.run_expect([0], f"rm -f {modules}/pkcs11.so")
    result = fresh_host.run(f"TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} bash {snippet_path(KEY_STEP)}")
    assert result.rc == 1, output(result)
    assert "install the pkcs11-provider package" in result.stderr, output(result)


@pytest.mark.arch_dependent("OpenSSL's module folder is the architecture's multiarch folder")
@pytest.mark.snippet(INSTALL_PROVIDER, checker="testinfra")
def test_the_provider_step_finds_the_module_where_openssl_loads_providers(fresh_host):
    done = fresh_host.run_expect([0], f"bash {snippet_path(INSTALL_PROVIDER)}")
    assert "/ossl-modules/pkcs11.so" in done.stdout, output(done)
