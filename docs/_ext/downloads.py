"""The site's downloads: the verify tool's wheel and the snippet bundle, built with the site, with their SHA-256.

At ``builder-inited`` every build writes into ``<outdir>/downloads/``: the wheel (zrunbook/wheel.py: the console
script ``zrunbook`` with verify and doctor) and the snippet bundle (zrunbook/bundle.py), each with a ``NAME.sha256``
file in ``sha256sum`` format beside it. ``{site-download} wheel`` (or ``bundle``) renders the file's link, its
SHA-256 and the link to its ``.sha256`` file; the SHA-256 is the one of the file this build wrote, never typed. The
bundle's bytes change with each build (its manifest has the build's time), so every page that shows a download is
read again in each build (``env-get-outdated``): a page never shows the SHA-256 of an earlier build's file. In the
PDF the file is named and said to be on the HTML site, with its SHA-256 only for the wheel, whose bytes depend on the
sources alone: the PDF's own bundle is not the HTML site's.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from zrunbook import bundle, wheel

FOLDER = "downloads"
REPRODUCIBLE = {"wheel"}  # the same sources give the same bytes (zrunbook/wheel.py); the bundle records its build time
WHAT = {"wheel": "the verify tool: a Python wheel with zrunbook verify and zrunbook doctor",
        "bundle": "the snippet bundle: every snippet of this guide, with MANIFEST.json"}


def _write(app: Sphinx) -> None:
    out = Path(app.outdir) / FOLDER
    built = wheel.build(out)
    tarball = bundle.write_bundle(out / bundle.DEFAULT.name)
    (out / f"{tarball.name}.sha256").write_text(f"{wheel.sha256(tarball)}  {tarball.name}\n", encoding="utf-8")
    app.zr_downloads = {kind: (path.name, wheel.sha256(path), path.stat().st_size)
                        for kind, path in (("wheel", built), ("bundle", tarball))}


class SiteDownload(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        kind = self.arguments[0]
        if kind not in WHAT:
            raise self.error(f"site-download takes one of {', '.join(WHAT)}, not {kind!r}")
        name, sha, size = self.env.app.zr_downloads[kind]
        docs = getattr(self.env, "zr_download_docs", set())
        docs.add(self.env.docname)
        self.env.zr_download_docs = docs
        para = nodes.paragraph(classes=["zr-site-download"])
        up = "../" * self.env.docname.count("/") + f"{FOLDER}/"
        if self.env.app.builder.format == "html":
            para += nodes.reference(name, "", nodes.literal(name, name), refuri=up + name)
        else:
            para += nodes.literal(name, name)
        para += nodes.Text(f" ({WHAT[kind]}, {size / 1024:.0f} KiB")
        if self.env.app.builder.format != "html":
            para += nodes.Text(", in the downloads folder of the HTML site")
            if kind not in REPRODUCIBLE:  # this build's file is not the HTML site's: its SHA-256 would not match
                para += nodes.Text("). Its SHA-256 is the HTML page's, and in its .sha256 file there.")
                return [para]
        para += nodes.Text("). SHA-256: ")
        para += nodes.literal(sha, sha)
        para += nodes.Text(" (")
        if self.env.app.builder.format == "html":
            para += nodes.reference("", f"{name}.sha256", refuri=up + f"{name}.sha256")
        else:
            para += nodes.literal("", f"{name}.sha256")
        para += nodes.Text(" holds it for sha256sum -c).")
        return [para]


def _purge(app, env, docname) -> None:
    getattr(env, "zr_download_docs", set()).discard(docname)


def _merge(app, env, docnames, other) -> None:
    env.zr_download_docs = getattr(env, "zr_download_docs", set()) | (
        getattr(other, "zr_download_docs", set()) & set(docnames))


def _outdated(app, env, added, changed, removed) -> list[str]:
    """Every page with a download is read again: the bundle's SHA-256 is new with each build."""
    return sorted(getattr(env, "zr_download_docs", set()) - set(removed))


def setup(app: Sphinx):
    app.connect("builder-inited", _write)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _outdated)
    app.add_directive("site-download", SiteDownload)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
