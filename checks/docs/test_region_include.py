"""Region includes: ``:start-after:`` and ``:end-before:`` show part of a snippet, the download is the whole file.

A marker must be on exactly one line of the file; one that is missing or on two lines is an error naming the
page and line. The shown part is what the copy button copies (the ``pre`` of the block).
"""

import pytest

REL = "demo/count-lines.sh"
SCRIPT = ("#!/usr/bin/env bash\n"
          "# Usage: count-lines.sh FILE\n"
          "set -euo pipefail\n"
          "# The options\n"
          "\n"
          "FILE=${1:?}\n"
          "QUIET=\"\"\n"
          "\n"
          "# The work\n"
          "wc -l \"$FILE\"\n"
          "echo done\n")


@pytest.fixture
def root(sphinx_root):
    sphinx_root.write(f"snippets/{REL}", SCRIPT)
    return sphinx_root


def _block(build, page):
    html = build.html(page.removesuffix(".md"))
    wrappers = html.select("div.zr-snippet-wrapper")
    assert len(wrappers) == 1, html
    return wrappers[0], html


def test_a_region_shows_the_lines_between_the_markers_and_the_caption_says_which(root):
    """Without the blank lines at either end: the caption names the lines a reader sees."""
    page = root.show("region", REL, ":start-after: The options", ":end-before: The work")
    build = root.build("html")
    assert build.returncode == 0, build.log  # invariant 1: a region include shows the file
    block, _ = _block(build, page)
    assert block.select_one(".caption-text, .caption").get_text(strip=True) == f"{REL}, lines 6\u20137 of 11"
    assert block.select_one("pre").get_text() == 'FILE=${1:?}\nQUIET=""\n'  # what the copy button copies


def test_the_download_under_a_region_is_the_whole_file_byte_for_byte(root):
    page = root.show("region", REL, ":end-before: The options")
    build = root.build("html")
    assert build.returncode == 0, build.log
    block, html = _block(build, page)
    assert block.select_one("pre").get_text() == "".join(SCRIPT.splitlines(keepends=True)[:3])
    link = html.select_one("p.zr-badges a.zr-download")
    assert link.get_text() == "download the whole file"
    assert (build.outdir / link["href"]).read_bytes() == (root.path / "snippets" / REL).read_bytes()


def test_a_whole_file_keeps_its_plain_caption_and_download(root):
    page = root.show("whole", REL)
    build = root.build("html")
    block, html = _block(build, page)
    assert block.select_one(".caption-text, .caption").get_text(strip=True) == REL
    assert block.select_one("pre").get_text() == SCRIPT
    assert html.select_one("a.zr-download").get_text() == "download"


@pytest.mark.negative(invariant="a region include's markers are each on one line of its snippet, in order",
                      expects="the build fails: the :start-after: marker is not in the snippet")
def test_a_marker_that_is_not_in_the_file_fails_the_build(root):
    page = root.show("missing", REL, ":start-after: The end")
    result = root.build()
    assert result.returncode != 0
    assert f"{page}:3: :start-after: marker 'The end' is not in snippets/{REL}" in result.log


@pytest.mark.negative(invariant="a region include's markers are each on one line of its snippet, in order",
                      expects="the build fails: the :end-before: marker is on 2 lines; a marker must name one line")
def test_a_marker_on_two_lines_fails_the_build(root):
    page = root.show("twice", REL, ":end-before: The")
    result = root.build()
    assert result.returncode != 0
    assert (f"{page}:3: :end-before: marker 'The' is on 2 lines of snippets/{REL} (lines 4, 9): "
            "a marker must name one line") in result.log


@pytest.mark.negative(invariant="a region include's markers are each on one line of its snippet, in order",
                      expects="the build fails: no lines between the markers")
def test_markers_in_the_wrong_order_fail_the_build(root):
    page = root.show("order", REL, ":start-after: The work", ":end-before: The options")
    result = root.build()
    assert result.returncode != 0
    assert f"{page}:3: no lines between the markers in snippets/{REL}" in result.log


def test_line_numbers_count_newlines_only(root):
    """A U+2028 inside a line (str.splitlines() breaks there, an editor does not) moves no line number."""
    root.write(f"snippets/{REL}", SCRIPT.replace("# Usage:", "# Usage\u2028:"))
    page = root.show("region", REL, ":start-after: The options", ":end-before: The work")
    build = root.build("html")
    block, _ = _block(build, page)
    assert block.select_one(".caption-text, .caption").get_text(strip=True) == f"{REL}, lines 6\u20137 of 11"
