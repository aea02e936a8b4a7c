"""A token site's user-PIN state, read and exercised the same way by the day-two PIN checks.

``flags(host)``: the token's flags as ``pkcsconf -t`` prints them (no login); ``COUNT_LOW``, ``FINAL_TRY``,
``LOCKED`` and ``FAILED`` their bits. ``handshake(host, ca)``: one ``openssl s_client`` handshake with the token site;
``in_service(host, ca)``: handshakes one after another and at once, so that every httpd worker has logged in, as on a
server in service (a worker logs in on its first handshake, not when it starts). Handshakes cannot be steered to a
worker: where a test needs every worker logged in, ``one_worker_process(host)`` before httpd starts holds httpd to one
worker process (the event MPM's threads still serve in parallel), and in_service then logs it in. ``OLD``, ``NEW``,
``WRONG``: test PINs (data, never in snippets/).
"""

from __future__ import annotations

import shlex

from checks.hosts.token import LABEL, PINS
from checks.hosts.util import ok
from zrunbook.verify import pins

OLD = PINS["TOKEN_USER_PIN"]
NEW, WRONG = "86429753", "00000000"  # test data only
COUNT_LOW, FINAL_TRY, LOCKED = 0x10000, 0x20000, 0x40000
FAILED = COUNT_LOW | FINAL_TRY | LOCKED


# httpd held to one worker process: once in_service has made its login, no later handshake starts a worker whose first
# login (good or bad) would change the failed-login count a test reads.
ONE_PROCESS = " ".join(shlex.quote(line) for line in (
    "<IfModule mpm_event_module>", "ServerLimit 1", "StartServers 1", "ThreadsPerChild 25", "MaxRequestWorkers 25",
    "MinSpareThreads 1", "MaxSpareThreads 25", "</IfModule>"))


def one_worker_process(host) -> None:
    """Before httpd starts: httpd runs its parent and one worker process (ONE_PROCESS)."""
    ok(host, f"printf '%s\\n' {ONE_PROCESS} > /etc/apache2/conf-enabled/zz-one-worker-process.conf")


def assert_one_worker_process(host) -> None:
    processes = host.check_output("pgrep -c -x apache2")
    assert processes == "2", f"httpd runs {processes} processes, not its parent and one worker (ONE_PROCESS)"


def flags(host) -> int:
    return pins.parse_pkcsconf(host.check_output("pkcsconf -t"))[LABEL].flags


def handshake(host, ca: str):
    return host.run("echo | timeout 20 openssl s_client -connect 127.0.0.1:443 -servername www.example.com"
                    f" -CAfile {shlex.quote(ca)} -verify_return_error -brief 2>&1")


def in_service(host, ca: str) -> None:
    connect = (f"timeout 20 openssl s_client -connect 127.0.0.1:443 -servername www.example.com -CAfile {ca}"
               " -verify_return_error -brief </dev/null >/dev/null 2>&1")
    ok(host, f"for i in 1 2 3 4; do {connect}; done; for i in $(seq 8); do {connect} & done; wait")
