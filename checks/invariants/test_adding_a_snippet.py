"""The README's "Adding a snippet", followed as written on a copy of the project (its static part: no host runs).

The README's own example is taken from the section (the directive lines, the marker and the test's first line)
with one change, a new file name beside the example's, so the steps add a snippet that does not exist yet:

1. the file, with its two-line header and ``set -euo pipefail``;
2. the directive lines on the page that shows the example;
3. a test module with the README's marker;
4. before ``make declarations``: make check's item ``declarations are current`` fails and names the new lines;
   then the command ``make declarations`` runs (read from the Makefile and tox.ini) writes them, and only them,
   and the item passes;
5. ``make check SNIPPET=...`` (the Makefile's narrowing, read from the Makefile) collects the new test and no test
   of another snippet, and ``python -m zrunbook where`` names the page and the test.
"""

from __future__ import annotations

import configparser
import re
import shlex
import subprocess
import sys
import textwrap

import pytest

from zrunbook import ROOT

README = ROOT / "README.md"


def section(readme: str) -> str:
    return readme.split("\n## Adding a snippet", 1)[1].split("\n## ", 1)[0]


def example(text: str) -> dict[str, str]:
    """The section's directive lines, marker and test line, and the snippet path they name."""
    directive = re.search(r"^( +)```\{snippet\} (\S+)\n\1```$", text, re.M)
    marker = re.search(r"^ +(@pytest\.mark\.snippet\(.*\))\n +(def test_\w+\(\w+\): \.\.\.)$", text, re.M)
    assert directive, "the section shows no snippet directive"
    assert marker, "the section shows no @pytest.mark.snippet marker and test"
    path = directive.group(2)
    assert f'"{path}"' in marker.group(1), "the marker names another file than the directive"
    return {"path": path, "directive": textwrap.dedent(directive.group(0)), "marker": marker.group(1),
            "test": marker.group(2)}


def declarations_command() -> list[str]:
    """What `make declarations` runs: the Makefile's recipe calls tox's declarations environment, whose command
    is read from tox.ini (pytest, run here with this interpreter)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ndeclarations:", 1)[1].split("\n\n", 1)[0]
    assert "-e declarations" in recipe, recipe
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    words = shlex.split(tox["testenv:declarations"]["commands"].strip())
    assert words[0] == "pytest", words
    assert tox["testenv:declarations"]["set_env"].split("ZR_HOSTS =", 1)[1].split("\n", 1)[0].strip() == ""
    return words[1:]


def narrowing(snippet: str) -> list[str]:
    """What `make check SNIPPET=...` passes to pytest, read from the Makefile's PYTEST_ARGS."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "$(if $(SNIPPET),--zr-only=$(SNIPPET))" in makefile
    return [f"--zr-only={snippet}", "checks"]


def test_the_section_names_every_step_in_order():
    text = section(README.read_text(encoding="utf-8"))
    steps = ["**File.**", "**Page.**", "**Check.**", "**Declare.**", "**Run.**"]
    assert [text.index(s) for s in steps] == sorted(text.index(s) for s in steps)
    for words in ("`make declarations`", "`zrunbook/declarations.tsv`", "Commit it", "`make check SNIPPET=",
                  "`set -euo pipefail`"):
        assert words in text, words


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_adding_a_snippet_as_the_readme_says(tree):
    ex = example(section(README.read_text(encoding="utf-8")))
    folder, _, name = ex["path"].rpartition("/")
    new = f"{folder}/say-hello.sh"
    assert name != "say-hello.sh"
    assert not (ROOT / "snippets" / new).exists()

    # 1. the file
    tree.write(f"snippets/{new}", "#!/usr/bin/env bash\n# Says hello: the README's example of a new snippet.\n"
                                  "# Needs nothing.\nset -euo pipefail\necho hello\n")
    # 2. the page that shows the example shows the new file too
    page = next(p for p in sorted((tree.path / "docs").rglob("*.md"))
                if f"```{{snippet}} {ex['path']}\n" in p.read_text(encoding="utf-8"))
    page.write_text(page.read_text(encoding="utf-8") + "\n" + ex["directive"].replace(ex["path"], new) + "\n",
                    encoding="utf-8")
    # 3. the test with the README's marker
    chapter = new.split("/", 1)[0]
    test_file = f"checks/{chapter}/test_say_hello.py"
    tree.write(test_file, "import pytest\n\n\n" + ex["marker"].replace(ex["path"], new) + "\n"
               + ex["test"] + "\n")

    # 4. without make declarations, make check fails and names the lines to add
    before = (tree.path / "zrunbook/declarations.tsv").read_text(encoding="utf-8")
    result = tree.check_coverage("declarations-are-current")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "run `make declarations` and commit the file" in result.stdout
    assert re.search(rf"^\s*\+ {re.escape(new)} .*{re.escape(test_file)}::", result.stdout, re.M), result.stdout
    written = tree.pytest(*declarations_command())
    assert written.returncode == 0, written.stdout + written.stderr
    after = (tree.path / "zrunbook/declarations.tsv").read_text(encoding="utf-8")
    added = set(after.splitlines()) - set(before.splitlines())
    assert set(before.splitlines()) <= set(after.splitlines())
    assert added
    assert all(line.startswith(new + "\t") for line in added), added
    assert any(test_file in line for line in added), added
    result = tree.check_coverage("declarations-are-current")
    assert result.returncode == 0, result.stdout + result.stderr

    # 5. make check SNIPPET=... collects the new test and nothing of another snippet; where names page and test
    collected = tree.pytest("--collect-only", *narrowing(new))
    assert collected.returncode == 0, collected.stdout + collected.stderr
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert any(i.startswith(test_file + "::") for i in ids), ids
    assert not any(i.startswith(f"checks/{chapter}/test_") and not i.startswith(test_file) for i in ids), ids
    where = subprocess.run([sys.executable, "-m", "zrunbook", "where", new], cwd=tree.path, capture_output=True,
                           text=True, check=False)
    assert where.returncode == 0, where.stdout + where.stderr
    assert page.relative_to(tree.path).as_posix() in where.stdout
    assert test_file in where.stdout
