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


@pytest.mark.negative(invariant="a test declares every snippet it reads",
                      expects="the test fails at teardown naming the @pytest.mark.uses(...) to add")
def test_a_test_that_read_an_undeclared_snippet_fails_at_teardown_naming_the_marker_to_add(monkeypatch):
    monkeypatch.setenv("ZR_UNDECLARED", "fail")
    report = _teardown_report(["crypto/token/init-token.sh"])
    assert report.outcome == "failed"
    assert "snippets/crypto/token/init-token.sh" in report.longrepr
    assert '@pytest.mark.uses("crypto/token/init-token.sh")' in report.longrepr
    assert _teardown_report([]).outcome == "passed"
    monkeypatch.setenv("ZR_UNDECLARED", "report")
    assert _teardown_report(["crypto/token/init-token.sh"]).outcome == "passed"


@pytest.mark.negative(invariant="a test declares every snippet it reads",
                      expects="an undeclared read fails the test unless ZR_UNDECLARED says report")
def test_failing_is_the_default_and_report_only_records(monkeypatch):
    monkeypatch.delenv("ZR_UNDECLARED", raising=False)
    assert _teardown_report(["crypto/token/init-token.sh"]).outcome == "failed"


@uses.reads("ihs/apache/test-ca.sh")
def _module_fixture():
    return None


class _Recorder:
    """The observer as the fixture hook sees it: the snippets read so far, and the wider fixtures' reads."""

    def __init__(self):
        self.recording, self.read, self.shared = True, set(), {}

    def snippets_seen(self):
        return set(self.read)


def _set_up(monkeypatch, recorder, fixturedef, node, reads_while_set_up):
    monkeypatch.setattr(zrunbook_plugin.observe, "recorder", lambda: recorder)
    hook = zrunbook_plugin.pytest_fixture_setup(fixturedef, SimpleNamespace(node=node))
    next(hook)
    recorder.read |= set(reads_while_set_up)
    with pytest.raises(StopIteration):
        hook.send("the fixture's value")


def test_a_wider_fixture_s_reads_are_judged_by_its_own_declarations_whichever_test_sets_it_up(monkeypatch):
    """A module fixture read two snippets while a test set it up: the one its @reads declares is fine, the other is
    named against the fixture (not the test), and the same holds whichever test set it up."""
    fixturedef = SimpleNamespace(argname="ca_host", scope="module", func=_module_fixture)
    module = SimpleNamespace(iter_markers=lambda name: [SimpleNamespace(args=("crypto/token/init-token.sh",))]
                             if name == "uses" else [])
    recorder = _Recorder()
    recorder.read = {"ihs/apache/check-hsts.sh"}  # the test's own read, before the fixture
    _set_up(monkeypatch, recorder, fixturedef, module,
            ["ihs/apache/test-ca.sh", "crypto/token/init-token.sh", "ihs/apache/check-cold-start.sh"])
    fd, node, rels = recorder.shared["ca_host"]
    assert rels == {"ihs/apache/test-ca.sh", "crypto/token/init-token.sh", "ihs/apache/check-cold-start.sh"}
    assert rels - uses.fixture_declared(fd, node) == {"ihs/apache/check-cold-start.sh"}
    message = uses.fixture_message("ca_host", ["ihs/apache/check-cold-start.sh"])
    assert "fixture 'ca_host'" in message
    assert '@reads("ihs/apache/check-cold-start.sh")' in message
    # a function-scoped fixture is the test's own: nothing set apart
    function_scoped = SimpleNamespace(argname="fresh_host", scope="function", func=_module_fixture)
    _set_up(monkeypatch, recorder, function_scoped, module, ["ihs/apache/check-hsts.sh"])
    assert "fresh_host" not in recorder.shared


@pytest.mark.negative(invariant="a test declares every snippet it reads",
                      expects="the test that set the fixture up fails, naming fixture 'ca_host' and the snippet")
def test_a_fixture_s_undeclared_read_fails_the_test_that_set_it_up_naming_the_fixture(monkeypatch):
    monkeypatch.delenv("ZR_UNDECLARED", raising=False)
    item = SimpleNamespace(nodeid="checks/x.py::test_x", user_properties=[("zr_inputs", {
        "undeclared": [], "undeclared_by_fixtures": {"ca_host": ["ihs/apache/check-cold-start.sh"]}})])
    hook = zrunbook_plugin.pytest_runtest_makereport(item, SimpleNamespace(when="teardown"))
    next(hook)
    with pytest.raises(StopIteration) as done:
        hook.send(SimpleNamespace(outcome="passed", longrepr=None))
    report = done.value.value
    assert report.outcome == "failed"
    assert "fixture 'ca_host'" in report.longrepr
    assert "snippets/ihs/apache/check-cold-start.sh" in report.longrepr


def test_a_read_every_user_of_the_fixture_declares_is_declared_in_any_order():
    """Two tests of a module use the fixture; the read both declare counts, the one only the first declares does not
    (another order would let the second set the fixture up)."""
    def item(nodeid, *declares):
        return SimpleNamespace(nodeid=nodeid, fixturenames=["ca_host"], function=None, _fixtureinfo=None,
                               get_closest_marker=lambda name: None,
                               iter_markers=lambda name: [SimpleNamespace(args=declares)] if name == "uses" else [])
    session = SimpleNamespace(items=[item("checks/m.py::test_a", "ihs/apache/test-ca.sh", "ihs/apache/check-hsts.sh"),
                                     item("checks/m.py::test_b", "ihs/apache/test-ca.sh"),
                                     item("checks/other.py::test_c")])
    every = uses.declared_by_every_user(session, "ca_host", SimpleNamespace(nodeid="checks/m.py"))
    assert every == {"ihs/apache/test-ca.sh"}
