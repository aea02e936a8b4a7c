"""The {source} role cites a study in prose by the same rule as a facts table's source column."""

import pytest

from checks.sphinx_roots import CONF, EXTENSIONS


def _with_facts(root):
    root.write("conf.py", CONF.replace(repr(EXTENSIONS), repr([*EXTENSIONS, "facts"])))
    return root


def test_a_document_id_renders_as_the_documents_short_title(sphinx_root):
    page = _with_facts(sphinx_root).add_page("cites", "# Cites\n\nThe study ({source}`ibm-was8-ssl-2013 (Table 7)`).\n")
    build = sphinx_root.build("html")
    assert build.returncode == 0, build.log
    text = build.html(page.removesuffix(".md")).select_one("span.zr-source").get_text()
    assert text == "WAS 8 SSL study (2013) (Table 7)"


@pytest.mark.negative(invariant="a page cites the study by source, not by a local file name",
                      expects="the build fails naming page and line: source '000_1ab4cc40e3a5fd7a.txt'")
def test_a_local_study_file_name_fails_the_build_naming_page_and_line(sphinx_root):
    """The old way of citing the study (its file name on the machine that wrote the page) is rejected."""
    _with_facts(sphinx_root).add_page("cites", "# Cites\n\nThe study ({source}`000_1ab4cc40e3a5fd7a.txt`).\n")
    build = sphinx_root.build("html")
    assert build.returncode != 0
    assert "cites.md:3: source '000_1ab4cc40e3a5fd7a.txt'" in build.log, build.log
