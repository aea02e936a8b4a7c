"""A token site's user-PIN state, read and exercised the same way by the day-two PIN checks.

``flags(host)``: the token's flags as ``pkcsconf -t`` prints them (no login); ``COUNT_LOW``, ``FINAL_TRY``,
``LOCKED`` and ``FAILED`` their bits. ``handshake(host, ca)``: one ``openssl s_client`` handshake with the token site;
``in_service(host, ca)``: handshakes one after another and at once, so that every httpd worker has logged in, as on a
server in service (a worker logs in on its first handshake, not when it starts). ``OLD``, ``NEW``, ``WRONG``: test
PINs (data, never in snippets/).
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


def flags(host) -> int:
    return pins.parse_pkcsconf(host.check_output("pkcsconf -t"))[LABEL].flags


def handshake(host, ca: str):
    return host.run("echo | timeout 20 openssl s_client -connect 127.0.0.1:443 -servername www.example.com"
                    f" -CAfile {shlex.quote(ca)} -verify_return_error -brief 2>&1")


def in_service(host, ca: str) -> None:
    connect = (f"timeout 20 openssl s_client -connect 127.0.0.1:443 -servername www.example.com -CAfile {ca}"
               " -verify_return_error -brief </dev/null >/dev/null 2>&1")
    ok(host, f"for i in 1 2 3 4; do {connect}; done; for i in $(seq 8); do {connect} & done; wait")
