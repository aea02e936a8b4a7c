"""``{walked}``: on a how-to chapter's index, what a clean host walks of the chapter and how that walk went.

``:after: crypto ihs`` names the chapters a reader does first (zrunbook.walkthrough.after reads it; the
walkthrough tests take their order from it). The box says, per check host, how many of the chapter's steps a
clean Debian 13 host runs or installs (Current and Ubuntu/Debian tabs), which it passes over and why (the
captions' ``:needs:``), and the walk's result from this checkout's results (build/results.json): passed only
when every walked step's latest walkthrough run passed for the snippet as it is now ("not run in this build" on a
fresh clone).
"""

from __future__ import annotations

import hashlib
import json

from docutils import nodes
from docutils.parsers.rst import directives
from snippet import problem, state
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from zrunbook import walkthrough

HOSTS = {"amd64": "debian13-amd64", "s390x": "debian13-s390x"}


def walk_result(ledger: dict, digests: dict, snippets: list[str], host: str) -> str:
    outcomes, ran = [], False
    for rel in snippets:
        runs = [r for r in ledger.get("snippets", {}).get(rel, {}).get("runs", [])
                if r.get("checker") == "walkthrough" and r.get("host") == host]
        ran = ran or bool(runs)
        current = [r for r in runs if r.get("sha256") == digests.get(rel)]
        outcomes.append(current[-1]["outcome"] if current else "not run for this version")
    if not outcomes:
        return "nothing to walk"
    if not ran:
        return "not run in this build"
    if all(o == "passed" for o in outcomes):
        return "passed"
    return "failed" if "failed" in outcomes else "not run for this version of every step"


def walk_declared(ledger: dict, snippets: list[str], host: str) -> bool:
    """Whether the committed declarations have a walkthrough check of these steps on host."""
    return any(c.get("checker") == "walkthrough" and c.get("host") == host
               for rel in snippets for c in ledger.get("snippets", {}).get(rel, {}).get("checks", []))


class WalkedDirective(SphinxDirective):
    has_content = False
    option_spec = {"after": directives.unchanged}

    def run(self):
        env = state(self.env.app)
        name = self.env.docname.split("/")[1] if self.env.docname.startswith("how-to/") else ""
        where = f"{self.env.doc2path(self.env.docname, False)}:{self.lineno}"
        if not name or not self.env.docname.endswith("/index"):
            problem(env, self.env.docname, f"{where}: {{walked}} belongs on a how-to chapter's index page")
            return []
        for before in self.options.get("after", "").split():
            if not (self.env.srcdir / "how-to" / before / "index.md").is_file():
                problem(env, self.env.docname, f"{where}: :after: names {before!r}, which is no how-to chapter")
                return []
        order = walkthrough.walk_order(name)
        tabs = walkthrough.DEBIAN_TABS
        for page in walkthrough.chapter(name):
            self.env.note_dependency(str(self.env.srcdir / f"{page}.md"))
        if not hasattr(self.env, "zr_walked"):
            self.env.zr_walked = set()
        self.env.zr_walked.add(self.env.docname)
        box = nodes.admonition(classes=["zr-walked"])
        box += nodes.title("Walked on a clean host", "Walked on a clean host")
        intro = ("A clean Debian 13 host (the debootstrap base and nothing else) follows this chapter's Current "
                 "and Ubuntu/Debian steps in page order, exactly as shown")
        para = nodes.paragraph("", intro)
        if len(order) > 1:
            para += nodes.Text(", after " + ("the chapters " if len(order) > 2 else "the chapter "))
            for k, before in enumerate(order[:-1]):
                if k:
                    para += nodes.Text(" and ")
                index = self.env.srcdir / "how-to" / before / "index.md"
                title = next((line[2:].strip() for line in index.read_text(encoding="utf-8").splitlines()
                              if line.startswith("# ")), before)
                ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/how-to/{before}/index",
                                            refexplicit=True, refdoc=self.env.docname)
                ref += nodes.inline(title, title)
                para += ref
        para += nodes.Text(".")
        box += para
        results = nodes.bullet_list()
        passed_over: dict[str, list[str]] = {}
        for arch, host in HOSTS.items():
            acted = walkthrough.acting((name,), tabs, arch)
            result = walk_result(self.env.zr_ledger, self.env.zr_digests, acted, host)
            line = nodes.paragraph("", f"{arch}: {len(acted)} step(s) run or installed; walk {result}.")
            if acted and not walk_declared(self.env.zr_ledger, acted, host):
                # checks/hosts/plugin.py: the s390x host runs only the walks declared arch_dependent
                line = nodes.paragraph("", f"{arch}: not walked there: nothing in this chapter's walk is declared to "
                                           "differ by architecture (ZR_EVERY_HOST=1 walks it there too).")
            results += nodes.list_item("", line)
            for page in walkthrough.chapter(name):
                for step in walkthrough.steps(page, tabs).steps:
                    if step.acts and step.needs in walkthrough.LACKS[arch]:
                        what = f"{step.snippet} on {page.rsplit('/', 1)[-1]}: {step.needs_text()}"
                        passed_over.setdefault(what, []).append(arch)
        box += results
        groups: dict[tuple[str, ...], list[str]] = {}
        for what, archs in passed_over.items():
            groups.setdefault(tuple(archs), []).append(what)
        for archs, whats in sorted(groups.items(), key=lambda g: -len(g[0])):
            hosts = "both hosts" if len(archs) == len(HOSTS) else " and ".join(archs) + " only"
            box += nodes.paragraph("", f"Passed over on {hosts}, as the steps' captions declare:")
            items = nodes.bullet_list()
            for what in whats:
                items += nodes.list_item("", nodes.paragraph("", what))
            box += items
        return [box]


def on_env_get_outdated(app, env, added, changed, removed):
    """The walk's result comes from the results: re-read the chapters' index pages when it or a digest changed."""
    stamp = hashlib.sha256(json.dumps([env.zr_ledger, env.zr_digests], sort_keys=True).encode()).hexdigest()
    previous = getattr(env, "zr_walked_stamp", None)
    env.zr_walked_stamp = stamp
    if previous is None or previous == stamp:
        return []
    return [doc for doc in getattr(env, "zr_walked", set()) if doc in env.all_docs]


def on_purge_doc(app, env, docname):
    getattr(env, "zr_walked", set()).discard(docname)


def on_merge_info(app, env, docnames, other):
    env.zr_walked = getattr(env, "zr_walked", set()) | (getattr(other, "zr_walked", set()) & set(docnames))


def setup(app: Sphinx):
    app.add_directive("walked", WalkedDirective)
    app.connect("env-get-outdated", on_env_get_outdated)
    app.connect("env-purge-doc", on_purge_doc)
    app.connect("env-merge-info", on_merge_info)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
