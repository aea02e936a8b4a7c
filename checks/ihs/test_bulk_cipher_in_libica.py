"""The study's IHS check, restored: after TLS traffic, libica's AES counters grow in the hardware column
(crypto/verify/check-bulk-cipher-in-libica.sh), on the s390x host (libica and the ICA token; TLS from the WAS
chapter's Java stand-in, checks/hosts/jsse.py).

The failing case is fully real: the stand-in with the token's provider last (the order the WAS pages recommend)
does AES in the JDK, libica counts nothing, and the check fails with its sentence. That is the point the IHS page
makes: a failure means "not through libica", which is also true of OpenSSL's and GSKit's own CPACF code. The
passing case could not be made real here (see the test's comment), and the page says so.
"""

import shlex

import pytest

from checks.hosts.jsse import VERIFY_KEY, start_server
from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.util import output

CHECK = "crypto/verify/check-bulk-cipher-in-libica.sh"
pytestmark = [pytest.mark.from_state(VERIFY_KEY), pytest.mark.only_hosts("debian13-s390x")]


def bulk_check(host, ca, count=3):
    return host.run(f"CA_FILE={ca} bash {snippet_path(CHECK)} localhost:9443 {count}")


# The pass path. No server here sends its TLS records through libica: GSKit cannot be installed, the Java stand-in
# with the token's provider first fails its handshakes (as on amd64), and sid's ibmca engine counted nothing under
# qemu. So the real server is the stand-in (provider last) and icastats is replaced by the real tool's own table
# (read from the host) whose AES GCM counts grow by 8 a call: this proves the script's reading of libica 3's table,
# not GSKit's offload.
GROWING_ICASTATS = r"""#!/bin/sh
n=$(cat /tmp/icastats-calls 2>/dev/null || echo 0); echo $((n + 1)) > /tmp/icastats-calls
/usr/bin/icastats "$@" | awk -v n=$((n * 8)) '$1 == "AES" && $2 == "GCM" {
  printf "%15s |%12d     %12d |%12d    %12d\n", "AES GCM", n, n, 0, 0; next } { print }'
"""


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_the_check_passes_when_libicas_aes_counts_grow_in_hardware(fresh_host):
    host = fresh_host
    start_pkcsslotd(host)
    ca = start_server(host, position="last")
    host.run_expect([0], f"printf '%s' {shlex.quote(GROWING_ICASTATS)} > /usr/local/bin/icastats && "
                         "chmod 755 /usr/local/bin/icastats")
    result = host.run(f"PATH=/usr/local/bin:$PATH CA_FILE={ca} bash {snippet_path(CHECK)} localhost:9443 3")
    assert result.rc == 0, output(result)
    assert "libica counted 16 AES operations in hardware, 0 in software" in result.stdout


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.negative("crypto/verify/check-bulk-cipher-in-libica.sh",
                      expects="the check fails, with its sentence, when AES runs outside libica")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_aes_done_outside_libica_fails_the_check_with_its_sentence(fresh_host):
    host = fresh_host
    start_pkcsslotd(host)
    ca = start_server(host, position="last")
    result = bulk_check(host, ca)
    assert result.rc == 1, output(result)
    assert "0 AES operations in hardware" in result.stdout
    assert "the bulk cipher did not go through libica" in result.stderr


@pytest.mark.negative("crypto/verify/check-bulk-cipher-in-libica.sh",
                      expects="a bad COUNT or a missing CA_FILE stops the check with a sentence")
@pytest.mark.snippet(CHECK, checker="testinfra")
def test_the_check_refuses_a_bad_count_and_a_missing_ca_file(host):
    bad = host.run(f"CA_FILE=/etc/hostname bash {snippet_path(CHECK)} localhost:9443 many")
    assert bad.rc == 1
    assert "COUNT must be a positive number" in bad.stderr
    no_ca = host.run(f"CA_FILE=/nonexistent bash {snippet_path(CHECK)} localhost:9443")
    assert no_ca.rc == 1
    assert "set CA_FILE" in no_ca.stderr
