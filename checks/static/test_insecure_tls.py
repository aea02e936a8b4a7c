"""No shell snippet switches off TLS certificate verification; the study's ``curl -k`` is rejected."""

from pathlib import Path

import pytest

from zrunbook.static import insecure_tls

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
BAD = Path(__file__).parent / "bad" / "insecure-tls"
SHELL = sorted(p.relative_to(SNIPPETS).as_posix() for p in SNIPPETS.rglob("*.sh"))


def test_no_shell_snippet_accepts_any_certificate():
    found = [f"snippets/{rel}: {p}" for rel in SHELL
             for p in insecure_tls.problems((SNIPPETS / rel).read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("bad", sorted(p.name for p in BAD.glob("*.sh")))
def test_insecure_tls_lint_rejects(bad):
    assert insecure_tls.problems((BAD / bad).read_text(encoding="utf-8")), f"accepted {bad}"


@pytest.mark.parametrize("line", [
    "curl -K - -s https://h/",  # -K reads options from stdin: not --insecure
    "curl -ok https://h/",  # the k is -o's file name
    "curl --cacert ca.pem https://h/  # never curl -k",
    "echo curl -k",  # an argument of echo, not a curl call
])
def test_insecure_tls_lint_accepts(line):
    assert insecure_tls.problems(line) == []
