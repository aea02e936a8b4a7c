"""The PDF as a reader meets it: every part and page, the charts, tabs as labelled blocks, badges and
diagrams, no cut code; a few pages kept as PNGs under build/pdf-pages/ for a person to look at."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from zrunbook import BUILD, registry

PDF_PAGES = BUILD / "pdf-pages"  # PNGs of a few PDF pages, for a person to look at

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
pytestmark = pytest.mark.xdist_group("pdf")  # the PDF (a module fixture, 35 s) is made once, on one worker


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    for tool in ("latexmk", "xelatex", "pdftotext", "pdfimages", "pdftoppm"):
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
    return {"dir": out, "text": text, "pages": text.split("\f"),
            "tex": (out / "zrunbook.tex").read_text(encoding="utf-8"),
            "log": (out / "zrunbook.log").read_text(errors="replace")}


def flat(text: str) -> str:
    """Text for comparing titles: markup and quotes plain, blanks collapsed, upper case (headings are)."""
    text = re.sub(r"[`*]", "", text).replace("\u2019", "'").replace("\u2011", "-")
    text = re.sub(r"(?<=[a-z])- (?=[a-z])", "", re.sub(r"\s+", " ", text))  # a word hyphenated at a line end
    return text.strip().upper()


def title(docname: str) -> str:
    return (DOCS / f"{docname}.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()


TOCTREE = re.compile(r"^```\{toctree\}\n((?::\w+:.*\n)*)((?:(?!```).*\n)*)```", re.M)


def toctrees(docname: str) -> list[tuple[str | None, list[str]]]:
    """(caption, docnames) of each toctree on a page, globs expanded as Sphinx expands them."""
    found = []
    folder = (DOCS / docname).parent
    for options, body in TOCTREE.findall((DOCS / f"{docname}.md").read_text(encoding="utf-8")):
        caption = re.search(r"^:caption:\s*(.+)$", options, re.M)
        names = []
        for entry in (e.strip() for e in body.splitlines() if e.strip()):
            if any(c in entry for c in "*?["):
                names += sorted(p.relative_to(DOCS).with_suffix("").as_posix() for p in folder.glob(f"{entry}.md")
                                if p.relative_to(DOCS).with_suffix("").as_posix() != docname)
            else:
                names.append((folder / entry).relative_to(DOCS).as_posix())
        found.append((caption.group(1).strip() if caption else None, names))
    return found


def pages_under(docname: str) -> list[str]:
    out = [docname]
    for _caption, names in toctrees(docname):
        for name in names:
            out += pages_under(name)
    return out


PARTS = [(caption, names) for caption, names in toctrees("index") if caption]


def test_the_guide_has_its_four_parts():
    assert [caption for caption, _ in PARTS] == ["Explanation", "How-to", "Results", "Reference"]


@pytest.mark.parametrize("caption", [c for c, _ in PARTS])
def test_every_part_opens_with_its_caption_in_the_pdf(pdf, caption):
    assert re.search(r"PART [IVX]+ " + re.escape(flat(caption)), flat(pdf["text"])), \
        f"no 'Part N {caption}' page in the PDF"


def test_the_contents_are_titled_contents_not_after_the_first_part(pdf):
    """Sphinx names the PDF's contents after the first toctree caption; docs/_ext/pdfparts.py prevents that."""
    # the contents' first page lists the first two parts (the list runs over a page since the guide grew)
    contents = next(p for p in pdf["pages"] if "Explanation" in p and "How-to" in p)
    assert contents.split()[0] == "CONTENTS", contents[:200]


@pytest.mark.parametrize(("caption", "names"), PARTS, ids=[c for c, _ in PARTS])
def test_every_page_of_every_part_is_in_the_pdf(pdf, caption, names):
    text = flat(pdf["text"])
    missing = [f"{name}: {title(name)}" for top in names for name in pages_under(top)
               if flat(title(name)) not in text]
    assert not missing, f"pages of part {caption} missing from the PDF:\n" + "\n".join(missing)


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def charts_shown() -> list[str]:
    return sorted({m for page in DOCS.rglob("*.md")
                   for m in re.findall(r"\{figure\} /_charts/([\w.-]+)\.png", page.read_text(encoding="utf-8"))})


def embedded_images(pdf) -> list[tuple[int, int, int]]:
    """(page, width, height) of every image in the PDF (pdfimages -list; masks left out)."""
    if "images" not in pdf:
        listing = subprocess.run(["pdfimages", "-list", str(pdf["dir"] / "zrunbook.pdf")],
                                 capture_output=True, text=True, check=True).stdout.splitlines()[2:]
        pdf["images"] = [(int(f[0]), int(f[3]), int(f[4])) for f in (line.split() for line in listing)
                         if f[2] == "image"]
    return pdf["images"]


def test_every_chart_drawn_is_shown_on_a_page(pdf):  # the build (pdf) draws them into docs/_charts
    drawn = sorted(p.stem for p in (DOCS / "_charts").glob("*.png"))
    assert charts_shown() == drawn, "charts drawn by zrunbook/results/charts.py and charts shown by the pages differ"


@pytest.mark.parametrize("chart", charts_shown())
def test_results_chart_is_embedded_in_the_pdf(pdf, chart):
    assert f"\\sphinxincludegraphics{{{{{chart}}}.png}}" in pdf["tex"], f"{chart}.png is not included in the .tex"
    size = png_size(pdf["dir"] / f"{chart}.png")
    assert any((w, h) == size for _page, w, h in embedded_images(pdf)), \
        f"no {size[0]}x{size[1]} image in the PDF: {chart}.png is not embedded"


def test_pages_a_reader_looks_at_are_kept_as_pngs(pdf):
    """Build artefacts for a person: title, contents, a part page, tabs with badges, a chart, the errata."""
    pages = pdf["pages"]

    def first(predicate) -> int:
        return next(i + 1 for i, p in enumerate(pages) if predicate(p))

    chart_pages = {page for page, _w, _h in embedded_images(pdf)}
    wanted = {"title": 1,
              "contents": first(lambda p: "CONTENTS" in p.upper() and "Explanation" in p),
              "part-how-to": first(lambda p: re.search(r"Part II\s+How-to", p)),
              "tabs-and-badges": first(lambda p: "Tab: Current" in p and "Checked:" in p),
              "results-chart": min(chart_pages),
              "errata-checks": first(lambda p: "How each erratum is checked" in p)}
    if PDF_PAGES.exists():
        shutil.rmtree(PDF_PAGES)
    PDF_PAGES.mkdir(parents=True)
    for name, number in wanted.items():
        subprocess.run(["pdftoppm", "-r", "80", "-png", "-singlefile", "-f", str(number), "-l", str(number),
                        str(pdf["dir"] / "zrunbook.pdf"), str(PDF_PAGES / name)], check=True)
    for name in wanted:
        width, height = png_size(PDF_PAGES / f"{name}.png")
        assert width > 600, f"{name}.png is {width}x{height}"
        assert height > 800, f"{name}.png is {width}x{height}"


def test_tabs_are_labelled_blocks_in_the_pdf(pdf):
    assert "Tab: Current" in pdf["text"]
    assert "Tab: 2013 study" in pdf["text"]


def test_badges_are_text_in_the_pdf(pdf):
    assert re.search(r"Checked: form checked [\w-]+ · static · (passed|failed|stale|not run)", pdf["text"])


def test_the_badge_legend_is_in_the_pdf_and_every_kind_of_evidence_is_in_words(pdf):
    """The front page's list of kinds (checkers.toml's [evidence]) reaches the PDF, and each kind is printed in words
    on some badge: in print, where colour may be lost, the words carry the meaning."""
    text = re.sub(r"\s+", " ", pdf["text"])
    legend = text[text.upper().find("HOW TO READ THE BADGES"):][:4000]
    assert legend.upper().startswith("HOW TO READ THE BADGES"), "the badge legend is not in the PDF"
    checkers = registry.declared()
    for name, kind in registry.vocabulary().items():
        said = f"{kind['badge']}:" if kind["badge"] == name else f"{kind['badge']} ({name}):"
        assert said in legend, f"the PDF's badge legend does not explain {said!r}"
        words = sorted({registry.evidence(c) for c, e in checkers.items() if e["evidence"] == name})
        badge = r"[\w-]+ · [\w-]+ · (passed|failed|stale|not run)"
        assert any(re.search(rf"Checked: (?:.*?; )?{re.escape(w)} {badge}", text) for w in words), \
            f"no badge in the PDF says any of {words!r} in words"


def test_diagrams_are_embedded(pdf):
    assert list(pdf["dir"].glob("graphviz-*.pdf")), "no Graphviz diagram was rendered for the PDF"
    assert "includegraphics" in pdf["tex"]


def test_no_overfull_box_cuts_code(pdf):
    """An overfull line set in the monospace font is code running past the margin: it must wrap."""
    lines = pdf["log"].splitlines()
    cut = [f"{line} {lines[i + 1][:80]}" for i, line in enumerate(lines[:-1])
           if line.startswith("Overfull \\hbox") and "in paragraph" in line
           and lines[i + 1].startswith("[]\\TU/DejaVuSansMono")]
    assert not cut, "\n".join(cut[:10])


OVERFULL = re.compile(r"Overfull \\hbox \(([\d.]+)pt too wide\) in paragraph at lines (\d+)--\d+")
TABLE_BEGIN = re.compile(r"\\begin\{(tabular|tabulary|longtable)\}")
TABLE_END = re.compile(r"\\end\{(tabular|tabulary|longtable)\}")


def overfull_lines(log: str, tex: str) -> dict[str, list[str]]:
    """The overfull lines of a LaTeX run, sorted by where they are: in code (the monospace font), in a table,
    or in prose (everything else, captions included)."""
    inside, depth = [False], 0
    for line in tex.splitlines():
        depth += bool(TABLE_BEGIN.search(line))
        inside.append(depth > 0)
        depth -= bool(TABLE_END.search(line))
    found: dict[str, list[str]] = {"code": [], "table": [], "prose": []}
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = OVERFULL.match(line)
        if m:
            after = lines[i + 1] if i + 1 < len(lines) else ""
            at = int(m.group(2))
            kind = "code" if "DejaVuSansMono" in after else "table" if at < len(inside) and inside[at] else "prose"
            found[kind].append(f"tex line {at}, {m.group(1)}pt: {after[:60]}")
    return found


def test_no_overfull_line_in_prose_or_captions(pdf):
    found = overfull_lines(pdf["log"], pdf["tex"])
    print("overfull lines in the PDF:", {k: len(v) for k, v in found.items()})
    assert found["prose"] == []


def test_the_overfull_count_sees_prose_that_runs_past_the_margin():
    tex = "\\chapter{x}\n\\begin{tabular}{ll}\na & b\n\\end{tabular}\nA paragraph with averyveryverylongword.\n"
    log = ("Overfull \\hbox (3.2pt too wide) in paragraph at lines 3--3\n[]\\TU/DejaVuSerif(0)/m/n/8 a\n"
           "Overfull \\hbox (9.5pt too wide) in paragraph at lines 5--5\n\\TU/DejaVuSerif(0)/m/n/10 avery\n")
    found = overfull_lines(log, tex)
    assert [len(found[k]) for k in ("code", "table", "prose")] == [0, 1, 1]
