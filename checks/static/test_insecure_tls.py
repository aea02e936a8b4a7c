"""The insecure-TLS lint reads commands, not text: what it must accept. That no shell snippet switches off
certificate verification, and that the study's ``curl -k`` is rejected, is checks/test_static_checkers.py's
(checker insecure-tls in zrunbook/checkers.toml)."""

from pathlib import Path

import pytest

from zrunbook.static import insecure_tls


@pytest.mark.parametrize("line", [
    "curl -K - -s https://h/",  # -K reads options from stdin: not --insecure
    "curl -ok https://h/",  # the k is -o's file name
    "curl --cacert ca.pem https://h/  # never curl -k",
    "echo curl -k",  # an argument of echo, not a curl call
])
def test_insecure_tls_lint_accepts(line):
    assert insecure_tls.problems(line) == []


@pytest.mark.parametrize("bad", sorted(p.name for p in (Path(__file__).parent / "bad" / "insecure-tls").glob("*.sh")))
def test_insecure_tls_lint_rejects(bad):
    """The errata table names this test; the registry runs the same files (checks/test_static_checkers.py)."""
    assert insecure_tls.problems((Path(__file__).parent / "bad" / "insecure-tls" / bad).read_text(encoding="utf-8"))
