"""The PDF as a reader meets it: every chapter, tabs as labelled blocks, badges and diagrams, no cut code."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    for tool in ("latexmk", "xelatex", "pdftotext"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is not installed: sudo bash .ci/prereqs.sh installs TeX and poppler-utils")
    out = tmp_path_factory.mktemp("latex")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "latex", "-c", ".", "docs", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    make = subprocess.run(["make", "-C", str(out), "LATEXMKOPTS=-interaction=nonstopmode", "all-pdf"],
                          capture_output=True, text=True)
    assert make.returncode == 0, make.stdout[-3000:]
    text = subprocess.run(["pdftotext", "-layout", str(out / "zrunbook.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    return {"dir": out, "text": text, "log": (out / "zrunbook.log").read_text(errors="replace")}


def chapter_titles() -> list[str]:
    titles = []
    for index in sorted((ROOT / "docs" / "how-to").glob("*/index.md")):
        titles.append(index.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip())
    return titles


def test_every_chapter_is_in_the_pdf(pdf):
    flat = re.sub(r"\s+", " ", pdf["text"]).upper()
    missing = [t for t in chapter_titles() if t.upper() not in flat]
    assert not missing, f"chapters missing from the PDF: {missing}"


def test_tabs_are_labelled_blocks_in_the_pdf(pdf):
    assert "Tab: Current" in pdf["text"]
    assert "Tab: 2013 study" in pdf["text"]


def test_badges_are_text_in_the_pdf(pdf):
    assert re.search(r"Checked: shellcheck · static · (passed|failed|stale|not run)", pdf["text"])


def test_diagrams_are_embedded(pdf):
    assert list(pdf["dir"].glob("graphviz-*.pdf")), "no Graphviz diagram was rendered for the PDF"
    assert "includegraphics" in (pdf["dir"] / "zrunbook.tex").read_text(encoding="utf-8")


def test_no_overfull_box_cuts_code(pdf):
    """An overfull line set in the monospace font is code running past the margin: it must wrap."""
    lines = pdf["log"].splitlines()
    cut = [f"{line} {lines[i + 1][:80]}" for i, line in enumerate(lines[:-1])
           if line.startswith("Overfull \\hbox") and "in paragraph" in line
           and lines[i + 1].startswith("[]\\TU/DejaVuSansMono")]
    assert not cut, "\n".join(cut[:10])
