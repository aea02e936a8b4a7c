"""The runbook's own code never calls testinfra's run_test: it accepts exit status 0 *or 1*
(Host.run_test -> run_expect([0, 1])), so a set-up step that failed with 1 passed silently (a keytool error
did, in the WAS checks). The project uses run_expect([0], ...) instead. testinfra's own modules (host.file,
host.package) still use run_test, where 1 means "no": that is why it is not overridden globally."""

import re
from pathlib import Path

from testinfra.backend import get_backend
from testinfra.host import Host

from zrunbook import ROOT

CALL = re.compile(r"\.run_test\(")


def calls_to_run_test(paths):
    return [f"{p.relative_to(ROOT)}:{n}" for p in paths for n, line in enumerate(p.read_text().splitlines(), 1)
            if CALL.search(line) and not line.lstrip().startswith("#")]


def test_testinfra_run_test_lets_exit_status_1_pass():
    assert Host(get_backend("local://")).run_test("exit 1").rc == 1


def test_no_project_code_calls_run_test():
    files = [p for root in ("zrunbook", "checks") for p in (ROOT / root).rglob("*.py")
             if p != Path(__file__).resolve()]
    assert calls_to_run_test(files) == []


def test_a_call_to_run_test_is_found(tmp_path):
    bad = ROOT / "build" / "bad_run_test.py"
    bad.parent.mkdir(exist_ok=True)
    bad.write_text('host.run_test("keytool -genkeypair ...")\n')
    assert calls_to_run_test([bad]) == ["build/bad_run_test.py:1"]
