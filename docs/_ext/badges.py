"""The badge line under each snippet, from the declarations and this checkout's results, and the download.

Per checker and host the committed declarations name for the file (``snippet_declarations``): its outcome for
the file's current bytes in the results ``make check`` wrote into this checkout (``snippet_results``, under
build/), by ``zrunbook.ledger.entries`` — the same rule the deployer's bundle manifest uses
(zrunbook/bundle.py), so a page and a manifest never disagree — then the date and commit of the newest check,
or "not run in this build" when no check of the file has a result here (a fresh clone), and, in HTML, a link
to the byte-identical file (the whole file also under a region include).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.osutil import relative_uri
from where_index import target_id as where_id

from zrunbook import ledger, registry

DOWNLOADS = "_snippets"
NOT_RUN = "not run in this build"


def badge_entries(app: Sphinx, rel: str) -> list[dict]:
    """Per (checker, host) that checks rel: its outcome by zrunbook.ledger.outcome (the bundle asks too)."""
    return ledger.entries(app.env.zr_ledger, rel, app.env.zr_digests.get(rel))


def badge_text(entry: dict) -> str:
    text = f"{entry['checker']} · {entry['host']} · {entry['outcome']}"
    return text + " · packages unverified" if entry.get("index_unverified") else text


def badge_line(app: Sphinx, rel: str, docname: str, whole_file: bool) -> nodes.paragraph:
    entries = badge_entries(app, rel)
    line = nodes.paragraph("", "", classes=["zr-badges"])
    line += nodes.strong("Checked:", "Checked:")
    line += nodes.Text(" ")
    if not entries:
        line += nodes.inline("", "no checker", classes=["zr-badge", "zr-failed"])
    for i, entry in enumerate(entries):
        if i:
            line += nodes.Text("; ")
        kind = registry.evidence(entry["checker"])
        if kind:  # what a pass proves, in words (not only a colour): the front page's list of kinds explains them
            machine = registry.evidence_kind(entry["checker"])
            line += nodes.inline("", kind, classes=["zr-evidence", f"zr-evidence-{machine}"])
            line += nodes.Text(" ")
        classes = ["zr-badge", "zr-" + entry["outcome"].replace(" ", "-")]
        if entry.get("index_unverified"):
            classes.append("zr-index-unverified")  # dashed amber border; the text says it too
        if entry.get("why") and app.builder.format == "html":  # the s390x host runs only declared tests: why this one
            line += nodes.abbreviation("", badge_text(entry), classes=classes,
                                       explanation=f"on {entry['host']} because {entry['why']}")
        else:
            line += nodes.inline("", badge_text(entry), classes=classes)
    when = ledger.checked_on(entries)
    if entries:
        note = f"(last checked {when[0]}, commit {when[1]})" if when else f"({NOT_RUN})"
        line += nodes.Text(" ")
        line += nodes.inline("", note, classes=["zr-checked-on"])
    if app.builder.format == "html":
        line += nodes.Text("  ")
        target = relative_uri(app.builder.get_target_uri(docname), f"{DOWNLOADS}/{rel}")
        label = "download the whole file" if whole_file else "download"
        line += nodes.reference("", label, refuri=target, classes=["zr-download"],
                                download=posixpath.basename(rel))
        line += nodes.Text("  ")
        where = relative_uri(app.builder.get_target_uri(docname), app.builder.get_target_uri("reference/where"))
        line += nodes.reference("", "where it is checked", refuri=f"{where}#{where_id(rel)}", classes=["zr-where-link"])
    return line


def on_builder_inited(app: Sphinx) -> None:
    confdir = Path(app.confdir)
    app.env.zr_ledger = ledger.read(confdir / app.config.snippet_results, confdir / app.config.snippet_declarations)


def on_env_get_outdated(app, env, added, changed, removed):
    """Badges depend on the declarations and results, the files' digests and the registry (each checker's
    evidence): re-read pages whose badges would change."""
    stamp = hashlib.sha256(json.dumps([env.zr_ledger, env.zr_digests, registry.declared(), registry.vocabulary()],
                                      sort_keys=True).encode()).hexdigest()
    previous = getattr(env, "zr_badge_stamp", None)
    env.zr_badge_stamp = stamp
    if previous is None or previous == stamp:
        return []
    return [doc for doc, uses in env.zr_uses.items() if uses and doc in env.all_docs]


def on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for placeholder in list(doctree.findall(nodes.paragraph)):
        rel = placeholder.get("zr_badge_for")
        if rel:
            placeholder.replace_self(badge_line(app, rel, docname, placeholder.get("zr_region", False)))


def on_build_finished(app: Sphinx, exception) -> None:
    """The files the download links point to, byte for byte; not after a build the invariants failed."""
    if exception is not None or app.statuscode or app.builder.format != "html":
        return
    root = Path(app.confdir) / app.config.snippet_root
    out = Path(app.outdir) / DOWNLOADS
    if out.exists():
        shutil.rmtree(out)
    for rel in sorted({rel for uses in app.env.zr_uses.values() for rel in uses}):
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, dest)


def setup(app: Sphinx):
    app.setup_extension("snippet")
    app.add_config_value("snippet_declarations", ledger.DECLARATIONS.relative_to(ledger.ROOT).as_posix(), "env")
    app.add_config_value("snippet_results", ledger.RESULTS.relative_to(ledger.ROOT).as_posix(), "env")
    app.connect("builder-inited", on_builder_inited)
    app.connect("env-get-outdated", on_env_get_outdated)
    app.connect("doctree-resolved", on_doctree_resolved)
    app.connect("build-finished", on_build_finished, priority=600)  # after invariants.py has judged the build
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
