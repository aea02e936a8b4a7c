"""The commands-checked lint reads the commands a script runs, not its text. That every shell snippet passes it
and that the negative cases (the reader's pgrep stumble among them) fail is checks/test_static_checkers.py's
(checker commands-checked in zrunbook/checkers.toml). Here: what it must not count as a call, and the list of
the minimal system's programs, compared with the clean walkthrough host (ZR_REGENERATE=1 rewrites it)."""

import os

import pytest

from zrunbook.static import commands_checked

KNOWN = commands_checked.minimal()


@pytest.mark.parametrize("script", [
    "awk '\n  /x/ { sub(/a/, \"b\"); print; next }\n' file",  # an awk program over several lines
    "case $1 in\n  ca | certificate) echo ok ;;\nesac",  # case patterns
    "[[ $want =~ ^(auto|on|off)$ ]] || exit 1",  # a regular expression in a test
    "for ((i = 1; i <= n; i++)); do :; done",  # arithmetic
    "x=${1:?usage: tool FILE}",  # the message of a parameter expansion
    "cat <<EOF\nopenssl version\nEOF",  # a here-document's body
    "f() { :; }\nf",  # a function the script defines
    'echo "run openssl later"  # openssl',  # words of a message and a comment
    'if command -v systemctl >/dev/null; then systemctl daemon-reload; fi',  # a guard that picks a way
])
def test_what_is_not_a_call_of_a_missing_program(script):
    assert commands_checked.problems(script, KNOWN) == []


def test_a_check_that_names_the_package_lets_the_call_pass():
    script = 'command -v curl >/dev/null || { echo "curl is missing: install curl." >&2; exit 1; }\ncurl -sS x'
    assert commands_checked.problems(script, KNOWN) == []


def test_a_loop_that_checks_several_programs_counts_for_each():
    script = ('for cmd in lszcrypt chzcrypt; do\n  command -v "$cmd" >/dev/null || '
              '{ echo "$cmd is missing: install s390-tools" >&2; exit 1; }\ndone\nlszcrypt\nchzcrypt -e 1')
    assert commands_checked.problems(script, KNOWN) == []


def test_the_minimal_systems_list_is_what_the_clean_host_can_call(clean_host):
    listed = clean_host.check_output(commands_checked.LISTING).split()
    data = commands_checked.DATA
    header = [line for line in data.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    if os.environ.get("ZR_REGENERATE") == "1":
        data.write_text("\n".join(header + listed) + "\n", encoding="utf-8")
        pytest.fail(f"{data.name} regenerated; review the diff and run again without ZR_REGENERATE")
    assert sorted(commands_checked.minimal()) == sorted(set(listed)), "run with ZR_REGENERATE=1 and review the diff"
    # the reader's stumbles: not on a minimal system
    assert "pgrep" not in listed
    assert "sysctl" not in listed
