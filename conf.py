"""Sphinx configuration for zrunbook. Behaviour lives in docs/_ext/ and the zrunbook library."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent / "docs" / "_ext"), str(Path(__file__).parent)]  # extensions, zrunbook

project = "zrunbook"
author = "the zrunbook team"
copyright = "2026, the zrunbook team"

extensions = [
    "myst_parser",
    "sphinx_tabs.tabs",
    "sphinx_copybutton",
    "sphinx.ext.graphviz",
    "snippet",
    "badges",
    "evidence",
    "invariants",
    "pdftabs",
    "facts",
    "charts",
    "pdfparts",
    "a11y",
    "outcome",
    "walked",
    "verify_tables",
    "where_index",
    "downloads",
]

exclude_patterns = ["_build", "_ext", "_charts", "**/README.md"]
myst_enable_extensions = ["colon_fence", "deflist", "substitution"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = "zrunbook"
html_static_path = ["docs/_static"]
html_css_files = ["zrunbook.css"]
html_show_sourcelink = False

graphviz_output_format = "svg"
copybutton_exclude = ".linenos, .gp"
sphinx_tabs_disable_tab_closing = True

latex_engine = "xelatex"
latex_documents = [("index", "zrunbook.tex", "zrunbook", author, "manual")]
latex_elements = {
    "sphinxsetup": "verbatimwrapslines=true, verbatimforcewraps=true",
    # Tables in a smaller type (facts tables of 6 columns or more smaller still: docs/_ext/facts.py) and a little
    # extra stretch, so that long product words fit their columns (checks/site/test_pdf.py counts overfull lines).
    "preamble": r"\setcounter{secnumdepth}{1}\usepackage{xurl}\setlength{\emergencystretch}{3em}"
                r"\newcommand\zrtablesize{\footnotesize}\makeatletter\g@addto@macro\sphinxattablestart{\zrtablesize}"
                r"\g@addto@macro\sphinxatlongtablestart{\zrtablesize}\makeatother",
    "fontpkg": r"\setmainfont{DejaVu Serif}\setsansfont{DejaVu Sans}\setmonofont{DejaVu Sans Mono}",
}

# Where snippets live (snippet.py). What checks them (snippet_declarations, committed) and this checkout's
# results (snippet_results: build/results.json, which `make check` writes) keep badges.py's defaults, the
# paths zrunbook/ledger.py names once (DECLARATIONS, RESULTS).
snippet_root = "snippets"
