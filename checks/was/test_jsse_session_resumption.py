"""Session resumption on the WebSphere page's stand-in: OpenJDK's JSSE with the key in the token.

WebSphere 9.0.5 cannot be installed here, and no WebSphere setting for its JSSE session cache could be
confirmed (facts/was/jsse-session-cache.csv), so the page shows what a JSSE server does with its
defaults: the IHS chapter's reader check (check-session-resumption.sh, transcluded, not copied) runs
against checks/standins/was/TokenHttpsServer.java started as in test_verify_tls.py (checks/hosts/jsse.py). OpenJDK
resumes TLS 1.2 and TLS 1.3 sessions out of the box, and its TLS 1.3 ticket lifetime hint is its default session timeout
(86400 s). amd64 only: one more JVM and token set-up is all it costs there.
"""

import pytest

from checks.hosts.jsse import VERIFY_KEY, start_server
from checks.hosts.steps import snippet_path
from checks.hosts.util import output
from zrunbook.shown_output import assert_shown_output

CHECK = "ihs/apache/check-session-resumption.sh"
JSSE_OUT = "was/verify/jsse-session-resumption.out"


@pytest.mark.uses("was/wsadmin/set-ssl-config-current.py")
@pytest.mark.from_state(VERIFY_KEY)
@pytest.mark.snippet(CHECK, checker="testinfra")
@pytest.mark.snippet(JSSE_OUT, checker="output-regenerated")
def test_jsse_stand_in_resumes_tls12_and_tls13_sessions_with_its_defaults(fresh_host):
    ca = start_server(fresh_host)
    result = fresh_host.run(f"CA_FILE={ca} bash {snippet_path(CHECK)} localhost:9443 2>&1")
    assert result.rc == 0, output(result)
    for proto in ("TLSv1.2", "TLSv1.3"):
        assert f"{proto}: 4 of 4 reconnections resumed the session (Reused)" in result.stdout, output(result)
    assert "TLSv1.3: session ticket lifetime hint from the server: 86400 s." in result.stdout, output(result)
    assert_shown_output(JSSE_OUT, result.stdout)
