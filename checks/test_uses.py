"""Reading a snippet a test does not declare fails it (checks/uses.py), and declaring it on a helper is enough."""

from types import SimpleNamespace

import pytest

from checks import uses, zrunbook_plugin
from checks.hosts import apache


@uses.reads("ihs/apache/test-ca.sh")
def _helper():
    return None


def _calls_the_helper():
    _helper()


def _calls_nothing():
    return len("ihs/apache/test-ca.sh")


def _calls_through_a_module():
    apache.serve_token(None)


def test_a_helper_s_declared_reads_count_for_every_function_that_calls_it_directly_or_through_its_module():
    """A function counts as called when its code names it (read from the code objects, not run): an over-estimate
    that only ever declares more."""
    assert uses.helper_patterns([_calls_the_helper]) == {"ihs/apache/test-ca.sh"}
    assert "ihs/apache/enable-tls-site-debian.sh" in uses.helper_patterns([_calls_through_a_module])
    assert uses.helper_patterns([_calls_nothing]) == set()


def _teardown_report(undeclared, outcome="passed"):
    item = SimpleNamespace(nodeid="checks/x.py::test_x", user_properties=[("zr_inputs", {"undeclared": undeclared})])
    hook = zrunbook_plugin.pytest_runtest_makereport(item, SimpleNamespace(when="teardown"))
    next(hook)
    with pytest.raises(StopIteration) as done:
        hook.send(SimpleNamespace(outcome=outcome, longrepr=None))
    return done.value.value


def test_a_test_that_read_an_undeclared_snippet_fails_at_teardown_naming_the_marker_to_add(monkeypatch):
    monkeypatch.setenv("ZR_UNDECLARED", "fail")
    report = _teardown_report(["crypto/token/init-token.sh"])
    assert report.outcome == "failed"
    assert "snippets/crypto/token/init-token.sh" in report.longrepr
    assert '@pytest.mark.uses("crypto/token/init-token.sh")' in report.longrepr
    assert _teardown_report([]).outcome == "passed"
    monkeypatch.setenv("ZR_UNDECLARED", "report")
    assert _teardown_report(["crypto/token/init-token.sh"]).outcome == "passed"
