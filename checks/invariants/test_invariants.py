"""The three invariants of the design, and the directive's bad-input errors, each shown to fail.

Each case builds a small project (checks/sphinx_roots.py) broken in one way and asserts that the build fails
with a message naming the file and line; the same project unbroken builds. The 'every snippet is checked'
cases run pytest on a copy of the real project, the untouched-guide and Makefile cases read it in place.
"""

import subprocess
import sys

import pytest

from checks.sphinx_roots import FENCE, REPO

SCRIPT = "#!/usr/bin/env bash\nset -euo pipefail\nlszcrypt -V\n"


def test_build_of_the_untouched_guide_succeeds(tmp_path):
    result = subprocess.run([sys.executable, "-m", "sphinx", "-b", "dummy", "-q", "-c", ".", "docs",
                             str(tmp_path / "dummy")], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_a_project_whose_pages_show_every_snippet_builds(sphinx_root):
    sphinx_root.write("snippets/crypto/packages/verify-packages.sh", SCRIPT)
    sphinx_root.show("shown", "crypto/packages/verify-packages.sh")
    result = sphinx_root.build()
    assert result.returncode == 0, result.log
    assert "snippet invariants violated" not in result.log


@pytest.mark.negative(invariant="every snippet is shown on a page",
                      expects="the build fails: orphan snippet: no page shows it")
def test_orphan_snippet_fails_the_build(sphinx_root):
    sphinx_root.write("snippets/crypto/packages/forgotten.sh", "#!/usr/bin/env bash\n# unused\nset -euo pipefail\n")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert "snippets/crypto/packages/forgotten.sh: orphan snippet: no page shows it" in result.log


@pytest.mark.negative(invariant="a page names only snippets that exist",
                      expects="the build fails: page names a missing snippet")
def test_page_naming_a_missing_snippet_fails_the_build(sphinx_root):
    body = f"# Missing\n\nText.\n\n{FENCE}{{snippet}} crypto/nowhere/gone.sh\n{FENCE}\n"
    page = sphinx_root.add_page("missing", body)
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:5: page names a missing snippet: snippets/crypto/nowhere/gone.sh" in result.log


@pytest.mark.negative(invariant="a page shows commands only from snippets/",
                      expects="the build fails on a fenced block: inline code block")
def test_fenced_code_block_in_a_page_fails_the_build(sphinx_root):
    page = sphinx_root.add_page("inline", f"# Inline\n\nRun this:\n\n{FENCE}bash\nmodprobe z90crypt\n{FENCE}\n")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:5: inline code block ('modprobe z90crypt'" in result.log


@pytest.mark.negative(invariant="a page shows commands only from snippets/",
                      expects="the build fails on an indented block: inline code block")
def test_indented_code_block_in_a_page_fails_the_build(sphinx_root):
    page = sphinx_root.add_page("indented", "# Indented\n\nRun this:\n\n    lszcrypt -V\n")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:5: inline code block ('lszcrypt -V'" in result.log


# reads every snippet by design (the observer saw each)
@pytest.mark.negative(invariant="every snippet has a checker",
                      expects="make check exits 1 and lists the file among the snippets no checker covers")
@pytest.mark.uses("**/*")
def test_snippet_without_a_checker_fails_make_check(tree):
    tree.write("snippets/crypto/packages/notes.txt", "nothing checks this file\n")
    result = tree.check_coverage()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "snippets no checker covers" in result.stdout
    assert "snippets/crypto/packages/notes.txt" in result.stdout


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_checked_tree_passes_the_coverage_invariant(tree):
    result = tree.check_coverage()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_committed_declarations_match_the_collected_checks(tree):
    result = tree.check_coverage("declarations-are-current")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


# reads every snippet by design (the observer saw each)
@pytest.mark.negative(invariant="zrunbook/declarations.tsv is current",
                      expects="declarations-are-current fails: run `make declarations` and commit the file")
@pytest.mark.uses("**/*")
def test_a_check_added_without_make_declarations_fails_make_check_until_it_is_run(tree):
    tree.write("checks/crypto/test_added_check.py", 'import pytest\n\n\n'
               '@pytest.mark.snippet("crypto/packages/verify-packages.sh", checker="shellcheck")\n'
               'def test_added():\n    pass\n')
    result = tree.check_coverage("declarations-are-current")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "run `make declarations` and commit the file" in result.stdout
    assert ("+ crypto/packages/verify-packages.sh  shellcheck  static  "
            "checks/crypto/test_added_check.py::test_added") in result.stdout
    written = tree.write_declarations()
    assert written.returncode == 0, written.stdout + written.stderr
    assert "checks/crypto/test_added_check.py::test_added" in (tree.path / "zrunbook/declarations.tsv").read_text()
    result = tree.check_coverage("declarations-are-current")
    assert result.returncode == 0, result.stdout + result.stderr


# reads every snippet by design (the observer saw each)
@pytest.mark.negative(invariant="zrunbook/declarations.tsv is written from the whole suite",
                      expects="a narrowed collection is refused: --zr-declarations needs the whole suite")
@pytest.mark.uses("**/*")
def test_declarations_from_a_narrowed_collection_are_refused(tree):
    result = tree.pytest("--collect-only", "--zr-declarations=zrunbook/declarations.tsv", "checks/crypto")
    assert result.returncode != 0
    assert "--zr-declarations needs the whole suite" in result.stderr


def test_malformed_snippet_reference_names_page_and_line(sphinx_root):
    sphinx_root.write("snippets/crypto/packages/verify-packages.sh", SCRIPT)
    page = sphinx_root.show("malformed", "crypto/packages/verify-packages.sh extra-word")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:3: malformed snippet reference" in result.log


@pytest.mark.negative(invariant="a snippet reference names a file inside snippets/",
                      expects="the build fails: malformed snippet reference ''")
def test_empty_snippet_reference_is_rejected(sphinx_root):
    page = sphinx_root.show("empty", "")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:3: malformed snippet reference ''" in result.log


@pytest.mark.negative(invariant="a snippet reference names a file inside snippets/",
                      expects="the build fails: snippet path must be relative to snippets/ and stay inside it")
def test_snippet_path_outside_snippets_is_rejected(sphinx_root):
    page = sphinx_root.show("outside", "../conf.py")
    result = sphinx_root.build()
    assert result.returncode != 0
    expected = f"{page}:3: snippet path '../conf.py' must be relative to snippets/ and stay inside it"
    assert expected in result.log


@pytest.mark.negative(invariant="every snippet is of a known file kind", expects="the build fails: unknown file kind")
def test_unknown_file_kind_is_rejected(sphinx_root):
    sphinx_root.write("snippets/crypto/packages/mystery.xyz", "?\n")
    page = sphinx_root.show("kind", "crypto/packages/mystery.xyz")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:3: unknown file kind for snippets/crypto/packages/mystery.xyz" in result.log


@pytest.mark.negative(invariant="snippets are UTF-8", expects="the build fails: the snippet is not UTF-8")
def test_snippet_that_is_not_utf8_is_rejected(sphinx_root):
    sphinx_root.write("snippets/crypto/packages/latin1.txt", "Gr\xfc\xdfe\n".encode("latin-1"))
    page = sphinx_root.show("latin1", "crypto/packages/latin1.txt")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:3: snippets/crypto/packages/latin1.txt is not UTF-8" in result.log


@pytest.mark.negative(invariant="no directive is shown as text", expects="the build fails: directive shown as text")
def test_tab_fence_with_too_few_colons_fails_the_build(sphinx_root):
    page = sphinx_root.add_page("tabs", "# Tabs\n\n::::{tabs}\n::{group-tab} Current\nText.\n::\n::::\n")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:4: directive shown as text ('::{{group-tab}} Current" in result.log


@pytest.mark.negative(invariant="snippets hold no control characters",
                      expects="the build fails: the line holds control character '\\x08'")
def test_snippet_with_a_control_character_is_rejected(sphinx_root):
    sphinx_root.write("snippets/crypto/packages/backspace.out", "Flags: 0x44D (RNG|\b)\n")
    page = sphinx_root.show("ctrl", "crypto/packages/backspace.out")
    result = sphinx_root.build()
    assert result.returncode != 0
    assert f"{page}:3: snippets/crypto/packages/backspace.out line 1 holds control character '\\x08'" in result.log


def _tox_commands(*make_vars: str) -> str:
    """The pytest command tox would run for `make check` with these variables (tox resolves it)."""
    import shlex

    tox = REPO / "build" / "tox-venv" / "bin" / "tox"
    assert tox.exists(), f"{tox} is missing: run the checks through `make check`, which installs tox there"
    dry = subprocess.run(["make", "-n", "--no-print-directory", "check", *make_vars], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    line = next(ln for ln in dry.splitlines() if " -e check" in ln)
    args = shlex.split(line.split(" -e check", 1)[1])
    out = subprocess.run([str(tox), "config", "-e", "check", "-k", "commands", *args], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    # `commands =` then one indented line per command (ruff, then pytest): the pytest one.
    return next(ln.strip() for ln in out.splitlines() if ln.strip().startswith("pytest "))


def test_make_check_turns_on_the_every_snippet_is_checked_invariant():
    """A bare `--` gives tox empty posargs and silently dropped the invariant (found in stop 12)."""
    assert _tox_commands().endswith("--zr-require-coverage checks")


def test_a_narrowed_make_check_runs_only_what_was_asked_without_the_invariant():
    assert _tox_commands("SNIPPET=crypto/token/init-token.sh").endswith(
        "--zr-only=crypto/token/init-token.sh checks")
    assert _tox_commands("CHECKS=checks/db2").endswith("--zr-results=build/results.json checks/db2")
