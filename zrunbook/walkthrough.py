"""A how-to chapter as a reader walks it: its pages in toctree order, each page's snippets in page order.

The sequence is read from the pages themselves (the ``{snippet}`` directives, inside the tabs a reader picks),
never written again, so a page that gains, loses or reorders a step changes the walkthrough.

* ``chapter(name)``: the chapter's pages, in the order of ``docs/how-to/<name>/index.md``'s toctree.
* ``steps(page, tabs)``: the snippets ``docs/<page>.md`` shows, in order, taking from each tab set the tab
  named in ``tabs`` (e.g. ``("Current", "Ubuntu/Debian")``); a tab set that has none of them is passed over
  whole, and the walkthrough says so.
* A step's ``needs`` is the page's own declaration (``:needs: ibm-z``) of what it needs that a host may lack
  (``NEEDS``: IBM Z hardware, the s390x architecture, an IBM product no check host can install, an older
  OpenSSL). The snippet directive shows it in the caption; a walk passes over the step on a host without it
  and lists it.
* ``:run: ARGS`` gives the arguments a reader types after the script (shown in the caption, passed by the walk);
  ``:save-as: PATH`` says where a configuration file goes (shown in the caption; the walk installs it there).
* ``:as: token-admin`` says who runs a script when it is not root (``RUN_AS``: the login the reader named in an
  environment variable); the caption says it and the walk runs the step in that user's login shell.

Shell scripts are run and files with ``:save-as:`` installed; shown output (``*.out``) and configuration
without a place are what a reader compares with or edits, not a step.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from markdown_it import MarkdownIt
from mdit_py_plugins.colon_fence import colon_fence_plugin

from zrunbook import ROOT

DOCS = ROOT / "docs"
DEBIAN_TABS = ("Current", "Ubuntu/Debian")  # the tabs a reader on Debian or Ubuntu picks
# What a step may need that a host can lack (``:needs:``), as the caption says it. The one table: the snippet
# directive (docs/_ext/snippet.py) accepts these values and no others.
NEEDS = {
    "ibm-z": "needs IBM Z hardware",
    "s390x": "s390x only",
    "s390x-path": "as shown for s390x; elsewhere after writing this machine's library path (step 2)",
    "ecc-on-z": "on IBM Z with ECC in hardware (z15 or later, or a CCA coprocessor); elsewhere after writing this "
                "machine's library path (step 2)",
    "ihs": "needs IBM HTTP Server",
    "db2": "needs Db2",
    "websphere": "needs WebSphere Application Server",
    "webseal": "needs WebSEAL",
    "liberty": "needs Liberty installed",
    "openssl-3.0": "only with OpenSSL 3.0 or 3.1",
    "own-kernel": "needs the machine's own kernel, not a container's",
    "native-cpu": "needs a native CPU, not qemu's emulation",
    "systemd": "needs a booted system that runs systemd",
    "table-rows": "make verify gives it the table's rows; by hand, give the rows of your release",
}
# What each check host has of NEEDS: no container here has an AP bus or an adapter, none of IBM's products can
# be installed in one, both run Debian 13's OpenSSL 3.5, and a container cannot set kernel parameters. The s390x
# host runs under qemu-user: a step whose outcome depends on the CPU's speed (a token login within pkcs11-provider's
# one-second wait) needs a native CPU.
# Who runs a step that root must not run (``:as:``): the environment variable naming the login, and the caption's words.
RUN_AS = {
    "token-admin": ("TOKEN_ADMIN", "run as the token administrator (TOKEN_ADMIN), not as root"),
}
HAS = {"amd64": {"s390x": False, "native-cpu": True}, "s390x": {"s390x": True, "s390x-path": True}}
_MD = MarkdownIt("commonmark").use(colon_fence_plugin)
_DIRECTIVE = re.compile(r"^\{([\w-]+)\}\s*(.*)$")
_OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")


@dataclass(frozen=True)
class Step:
    page: str
    line: int
    snippet: str
    tabs: tuple[str, ...]  # the tabs the step sits in, outermost first
    options: dict = field(default_factory=dict, hash=False)

    @property
    def runs(self) -> bool:
        return self.snippet.endswith(".sh")

    @property
    def saves(self) -> str | None:
        return self.options.get("save-as")

    @property
    def acts(self) -> bool:
        """A step a walk does something for: a script to run or a file to install."""
        return self.runs or bool(self.saves)

    @property
    def args(self) -> str:
        return self.options.get("run", "")

    @property
    def user_variable(self) -> str | None:
        """The environment variable naming the login this step runs as (``:as:``); None for root."""
        who = self.options.get("as")
        return RUN_AS[who][0] if who else None

    @property
    def needs(self) -> str | None:
        return self.options.get("needs")

    def needs_text(self) -> str:
        return NEEDS.get(self.needs or "", "")

    def where(self) -> str:
        inside = f" (tab {' · '.join(self.tabs)})" if self.tabs else ""
        return f"docs/{self.page}.md:{self.line}: snippets/{self.snippet}{inside}"


@dataclass
class Walk:
    steps: list[Step]
    passed_over: list[str]  # tab sets with none of the chosen tabs: "page:line: tabs A, B"


def chapter(name: str, docs: Path = DOCS) -> list[str]:
    """The how-to chapter's pages in toctree order, as docnames ("how-to/crypto/01-adapters")."""
    index = (docs / "how-to" / name / "index.md").read_text(encoding="utf-8")
    for token in _MD.parse(index):
        if token.type in ("fence", "colon_fence") and token.info.strip() == "{toctree}":
            lines = [line.strip() for line in token.content.splitlines() if line.strip()]
            entries = [line for line in lines if not line.startswith(":")]
            if ":glob:" in lines:  # Sphinx sorts the pages a pattern matches; the index is not one of them
                entries = [p.stem for e in entries for p in sorted((docs / "how-to" / name).glob(f"{e}.md"))
                           if p.stem != "index"]
            return [f"how-to/{name}/{entry}" for entry in entries]
    raise ValueError(f"docs/how-to/{name}/index.md has no toctree")


def after(name: str, docs: Path = DOCS) -> list[str]:
    """The chapters a reader walks before this one, as its index page declares them (``{walked}`` with
    ``:after: crypto ihs``), each with its own in front: the order a walk of this chapter takes."""
    index = (docs / "how-to" / name / "index.md").read_text(encoding="utf-8")
    for token in _MD.parse(index):
        if token.type in ("fence", "colon_fence") and token.info.strip() == "{walked}":
            options = dict(_OPTION.match(s).groups() for s in token.content.splitlines() if _OPTION.match(s))
            order: list[str] = []
            for before in options.get("after", "").split():
                order += [c for c in (*after(before, docs), before) if c not in order]
            return order
    raise ValueError(f"docs/how-to/{name}/index.md has no {{walked}} block: say what a walk of it starts after")


def walk_order(name: str, docs: Path = DOCS) -> tuple[str, ...]:
    return (*after(name, docs), name)


def steps(page: str, tabs: tuple[str, ...], docs: Path = DOCS) -> Walk:
    walk = Walk([], [])
    text = (docs / f"{page}.md").read_text(encoding="utf-8")
    _walk(page, text, 0, (), tabs, walk)
    return walk


def _walk(page: str, text: str, offset: int, inside: tuple[str, ...], chosen: tuple[str, ...], walk: Walk) -> None:
    for token in _MD.parse(text):
        if token.type not in ("fence", "colon_fence"):
            continue
        m = _DIRECTIVE.match(token.info.strip())
        if not m:
            continue
        name, argument = m.groups()
        line = offset + token.map[0] + 1
        body_offset = offset + token.map[0] + 1
        if name == "snippet":
            options = dict(_OPTION.match(s).groups() for s in token.content.splitlines() if _OPTION.match(s))
            walk.steps.append(Step(page, line, argument.strip(), inside, options))
        elif name == "tabs":
            tabs = _tabs(token.content)
            pick = next((label for label in chosen if label in [t[0] for t in tabs]), None)
            if pick is None:
                walk.passed_over.append(f"docs/{page}.md:{line}: tabs {', '.join(t[0] for t in tabs)}")
                continue
            label, content, start = next(t for t in tabs if t[0] == pick)
            _walk(page, content, body_offset + start, (*inside, label), chosen, walk)
        elif name not in ("group-tab", "toctree"):
            _walk(page, token.content, body_offset, inside, chosen, walk)  # an admonition, a container


def _tabs(content: str) -> list[tuple[str, str, int]]:
    """(label, content, line offset of the content) of each group-tab in a tab set."""
    found = []
    for token in _MD.parse(content):
        m = _DIRECTIVE.match(token.info.strip()) if token.type in ("fence", "colon_fence") else None
        if m and m.group(1) == "group-tab":
            found.append((m.group(2).strip(), token.content, token.map[0] + 1))
    return found


# --- walking a chapter on a host ------------------------------------------------------------------------


def acting(chapters: tuple[str, ...], tabs: tuple[str, ...], arch: str, docs: Path = DOCS) -> list[str]:
    """The snippets a walk of these chapters acts on (runs or installs) on a host of this architecture: what
    its badge may name for that host, never a step it passes over."""
    return sorted({s.snippet for name in chapters for page in chapter(name, docs)
                   for s in steps(page, tabs, docs).steps if s.acts and s.needs not in LACKS[arch]})

LACKS = {arch: {need for need in NEEDS if not has.get(need, False)} for arch, has in HAS.items()}


@dataclass
class Report:
    ran: list[str] = field(default_factory=list)
    passed_over: list[str] = field(default_factory=list)  # steps the page declares this host cannot run
    not_run: list[str] = field(default_factory=list)  # tab sets with none of the chosen tabs
    failed: str | None = None  # the first step that failed, with its output

    def summary(self) -> str:
        lines = [f"ran {len(self.ran)} step(s); passed over {len(self.passed_over)} the pages declare "
                 f"this host cannot run"]
        lines += [f"  passed over: {p}" for p in self.passed_over]
        return "\n".join(lines)


def walk_chapter(host, name: str, tabs: tuple[str, ...], env: dict[str, str], *, arch: str,
                 snippets_in_container: str = "/snippets") -> Report:
    """Run the chapter's steps on ``host`` (a testinfra host) in page order (``walk_page`` for each page); stop
    at the first that fails."""
    report = Report()
    for page in chapter(name):
        walk_page(host, page, tabs, env, arch=arch, snippets_in_container=snippets_in_container, report=report)
        if report.failed:
            break
    return report


def walk_page(host, page: str, tabs: tuple[str, ...], env: dict[str, str], *, arch: str,
              snippets_in_container: str = "/snippets", report: Report | None = None) -> Report:
    """Run one page's steps on ``host`` in page order: scripts as root (or as the login a step's ``:as:`` names,
    from ``env``) with the reader's environment ``env`` and the caption's arguments, files installed where the
    caption says; stop at the first that fails. Steps the page declares with ``:needs:`` that this host lacks
    are passed over and listed."""
    report = report if report is not None else Report()
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    walk = steps(page, tabs)
    report.not_run += walk.passed_over
    for step in walk.steps:
        if not step.acts:
            continue
        if step.needs in LACKS[arch]:
            report.passed_over.append(f"{step.where()}: {step.needs_text()}, as the page declares")
            continue
        if step.saves:
            # The reader saves the file where the caption says (the download link gives it byte for byte).
            command = f"install -D -m 0644 {snippets_in_container}/{step.snippet} {shlex.quote(step.saves)}"
        else:
            # Each step in a new login shell (root's, or the user's the caption names), as the pages ask after
            # the install (groups are read at login: the pkcs11 group the install gives root, or step 2 gives the
            # token administrator, counts only from the next login). In the snippet's folder, as in the reader's
            # download folder: a file argument (:run:) is found.
            folder = PurePosixPath(snippets_in_container, step.snippet).parent
            script = f"cd {folder} && env {assignments} bash {snippets_in_container}/{step.snippet} {step.args}"
            user = "root"
            if step.user_variable:
                user = env.get(step.user_variable, "")
                if not user:
                    report.failed = f"{step.where()} runs as ${step.user_variable}, which the walk does not set"
                    return report
            command = f"su - {shlex.quote(user)} -c {shlex.quote(script.rstrip())}"
        result = host.run(command)
        if result.rc != 0:
            report.failed = (f"{step.where()} exited {result.rc}\nstdout:\n{result.stdout}\n"
                             f"stderr:\n{result.stderr}")
            return report
        report.ran.append(step.where() + (f" as {step.options['as']}" if step.user_variable else ""))
    return report
