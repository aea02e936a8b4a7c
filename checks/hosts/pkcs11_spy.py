"""pkcs11-spy between pkcs11-provider and openCryptoki in a container host's httpd, and handshakes cut at markers in
its log: shared by checks/results/test_token_profile.py (the calls per handshake) and make bench WHAT=token-settings
(each scratch build's calls before it is timed)."""

from __future__ import annotations

from checks.hosts import apache
from zrunbook.results import token_profile as tp

HANDSHAKES = 200
CONF = apache.OPENSSL_PKCS11_CONF
LOG = "/tmp/spy.log"


def spy_between_provider_and_token(host) -> None:
    """pkcs11-provider loads pkcs11-spy, which loads openCryptoki and logs every call (httpd's envvars)."""
    spy = host.check_output("ls /usr/lib/*-linux-gnu/pkcs11/pkcs11-spy.so").strip()
    real = host.check_output(
        f"readlink -f $(sed -n -E 's/^[[:space:]]*pkcs11-module-path[[:space:]]*=[[:space:]]*//p' {CONF})").strip()
    assert real, f"no pkcs11-module-path in {CONF}"
    host.run_expect([0], f"sed -i -E 's|^([[:space:]]*pkcs11-module-path[[:space:]]*=).*|\\1 {spy}|' {CONF}")
    host.run_expect([0], f"printf 'export PKCS11SPY={real} PKCS11SPY_OUTPUT={LOG}\\n' >> /etc/apache2/envvars")


def handshakes(host, ca: str, sigalgs: str, count: int = HANDSHAKES) -> list[list[tp.Call]]:
    """httpd started afresh, count full TLS 1.3 handshakes, the spy's log cut into one list per handshake."""
    host.run_expect([0], f": > {LOG} && chmod 666 {LOG}")  # httpd's workers write to it too
    apache.start(host)
    r = host.run(f"for i in $(seq {count}); do echo '{tp.MARK}' $i >> {LOG}; "
                 "timeout 60 openssl s_client -connect 127.0.0.1:443 -servername www.example.com "
                 f"-CAfile {ca} -verify_return_error -tls1_3 -no_ticket -brief -sigalgs {sigalgs} "
                 "</dev/null >/dev/null 2>&1 || exit 1; done")
    assert r.rc == 0, "a handshake failed"
    segs = tp.segments(host.check_output(f"cat {LOG}"))
    assert len(segs) == count, f"{len(segs)} marked handshakes in the spy's log, {count} made"
    return segs
