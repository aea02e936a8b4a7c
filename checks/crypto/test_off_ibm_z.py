"""Steps that only IBM Z can run say so on another machine, instead of asking for a package that has no build
there (Debian's libica-utils and s390-tools are built for s390x only)."""

import pytest

from checks.hosts.steps import run_snippet
from checks.hosts.util import output

SHA512 = "crypto/verify/sha512-on-ica-token.sh"


@pytest.mark.only_hosts("debian13-amd64", why="it checks the answer off IBM Z")
@pytest.mark.snippet(SHA512, checker="testinfra")
def test_the_ica_token_check_says_this_is_not_ibm_z_on_amd64(host):
    r = run_snippet(host, SHA512)
    assert r.rc == 1, output(r)
    assert "This is not IBM Z (x86_64): libica and the ICA token exist only on s390x" in r.stderr
    assert "icastats is missing" not in r.stderr
