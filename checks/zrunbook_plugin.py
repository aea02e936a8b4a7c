"""pytest plugin: which checker checks which snippet (declared), and what happened when it ran (results).

* ``@pytest.mark.snippet("crypto/x.sh", "db2/*.clp", checker="shellcheck")`` declares that a test
  checks those files (paths or globs relative to ``snippets/``) with a checker named in
  ``zrunbook/checkers.toml``. A pattern that matches nothing, or an unknown checker, is an error.
* The host of a test is the value of its ``host``/``fresh_host`` parameter (container hosts), or
  "static" when it has none.
* ``--zr-results=FILE`` (``make check``: ``build/results.json``, never committed) records in FILE which test
  checks which snippet (at collection) and each test's outcome with the sha256 of the snippet it checked, the
  date and the commit (at the end), merged into what FILE holds; see zrunbook/ledger.py. The guide and the
  bundle only read it.
* ``--zr-declarations=FILE`` (``make declarations``, with ``--collect-only``: zrunbook/declarations.tsv,
  committed) writes the whole suite's coverage on every host to FILE. Only a whole-suite collection may.
* ``--zr-only=GLOB`` keeps only the tests that check the matching snippets.
* ``--zr-require-coverage`` adds the test ``every snippet is checked``: it fails, naming the files,
  when a snippet under ``snippets/`` has no checker (invariant 2). ``make check`` sets it; it also marks
  the collection as the whole suite, so the results' coverage is replaced rather than merged. On every host
  (ZR_HOSTS unset) it also adds ``declarations are current``: it fails, naming the lines that differ and the
  command that rewrites the file, when the committed declarations no longer match the collection.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checks import observe, reuse, uses
from checks.hosts.engine import HOSTS
from checks.hosts.plugin import S390X
from zrunbook import ledger, registry
from zrunbook.snippets import all_snippets, digest, expand

HOST_PARAMS = ("host", "fresh_host", "clean_host")
# Fixtures that start a container, build the guide or open a browser: what --zr-static leaves out.
DYNAMIC_FIXTURES = {"host", "fresh_host", "clean_host", "published_host", "ipc_host", "zr_host_pool", "site", "pdf",
                    "tree", "page", "browser", "base_url"}


def snippet_root(config) -> Path:
    return Path(config.rootpath) / "snippets"


def host_of(item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    for name in HOST_PARAMS:
        value = callspec.params.get(name)
        if isinstance(value, str) and value in HOSTS:
            return value
    for value in callspec.params.values():
        if isinstance(value, str) and value in HOSTS:  # other parameters may be dicts or lists
            return value
    return None


def arch_reason(item, host: str | None) -> str | None:
    """Why a test runs on the s390x host (checks/hosts/plugin.py runs only declared tests there): its
    arch_dependent reason, or that it is an s390x-only test."""
    if host != S390X:
        return None
    arch = item.get_closest_marker("arch_dependent")
    if arch is not None and arch.args:
        return str(arch.args[0])
    only = item.get_closest_marker("only_hosts")
    return "an s390x-only check" if only is not None and tuple(only.args) == (S390X,) else None


def pytest_addoption(parser):
    group = parser.getgroup("zrunbook")
    group.addoption("--zr-results", metavar="FILE",
                    help="record coverage (at collection) and outcomes per snippet in FILE (zrunbook/ledger.py)")
    group.addoption("--zr-declarations", metavar="FILE",
                    help="write the whole suite's coverage to FILE (the committed declarations; zrunbook/ledger.py)")
    group.addoption("--zr-require-coverage", action="store_true",
                    help="fail when a snippet under snippets/ has no checker")
    group.addoption("--zr-static", action="store_true",
                    help="only the static checks: no container host, no guide build, no browser")
    group.addoption("--zr-only", metavar="GLOB",
                    help="run only the tests that check snippets matching GLOB (relative to snippets/)")


class SuiteCheck(pytest.Item):
    """A check of the collection as a test, so it is counted in pytest's closing line: it fails with
    ``message`` followed by ``problems``, one a line, when there are any."""

    def __init__(self, *, problems, message, **kwargs):
        super().__init__(**kwargs)
        self.problems, self.message = problems, message

    def runtest(self):
        if self.problems:
            raise AssertionError(self.message + "\n" + "\n".join(f"  {p}" for p in self.problems))

    def repr_failure(self, excinfo):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, self.name.replace("-", " ")


def pytest_collection_modifyitems(session, config, items):
    root = snippet_root(config)
    checkers = registry.checkers()
    coverage: dict[str, list[dict]] = {}
    errors = []
    for item in items:
        for mark in item.iter_markers("snippet"):
            checker = mark.kwargs.get("checker")
            if checker not in checkers:
                errors.append(f"{item.nodeid}: checker {checker!r} is not in zrunbook/checkers.toml")
                continue
            if not mark.args:
                errors.append(f"{item.nodeid}: @pytest.mark.snippet needs at least one path")
            host = host_of(item)
            if checkers[checker]["kind"] == "host" and host is None:
                errors.append(f"{item.nodeid}: checker {checker!r} runs on a host, "
                              "but the test uses no host/fresh_host fixture")
            files = []
            for pattern in mark.args:
                matched = expand(pattern, root)
                if not matched:
                    errors.append(f"{item.nodeid}: snippet {pattern!r} matches no file under snippets/")
                files.extend(matched)
            why = arch_reason(item, host)
            test = ledger.test_id(item.nodeid)
            for rel in files:
                coverage.setdefault(rel, []).append({"checker": checker, "host": host, "test": test,
                                                     **({"why": why} if why else {})})
                item.user_properties.append(("zr_snippet", [rel, checker, host]))
    if errors:
        raise pytest.UsageError("snippet markers are wrong:\n  " + "\n  ".join(errors))

    # The coverage: every collected test, before --zr-static/--zr-only narrow what runs. Under
    # xdist the controller collects nothing; the first worker sends its collection back (workeroutput).
    config.zr_coverage = coverage
    if hasattr(config, "workerinput") and config.workerinput.get("workerid") == "gw0":
        config.workeroutput["zr_coverage"] = coverage

    if config.getoption("zr_static"):
        keep = [i for i in items if not (set(getattr(i, "fixturenames", ())) & DYNAMIC_FIXTURES)
                and not i.nodeid.startswith("checks/hosts/test_cleanup.py")]  # starts pytest sessions with containers
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    inputs = ledger.load(Path(config.getoption("zr_results"))).get("inputs", {}) \
        if reuse.enabled() and config.getoption("zr_results") else {}
    if inputs:  # a fresh clone (CI) has no results, so nothing to reuse and nothing to compute
        why = {i: reuse.why_not(i, inputs.get(ledger.test_id(i.nodeid)), host_of(i)) for i in items}
        reused = [i for i in items if why[i] is None]
        config.zr_reused = [ledger.test_id(i.nodeid) for i in reused]
        config.zr_ran_why = reuse.reasons(why.values())
        if hasattr(config, "workerinput") and config.workerinput.get("workerid") == "gw0":
            config.workeroutput["zr_reused"] = config.zr_reused
            config.workeroutput["zr_ran_why"] = config.zr_ran_why
        if reused:
            config.hook.pytest_deselected(items=reused)
            items[:] = [i for i in items if i not in set(reused)]

    only = config.getoption("zr_only")
    if only:
        wanted = set(expand(only, root))
        if not wanted:
            raise pytest.UsageError(f"--zr-only {only!r} matches no file under snippets/")
        keep = [i for i in items  # the tests that check a wanted snippet, and those that declare they run one
                if any(v[0] in wanted for k, v in i.user_properties if k == "zr_snippet")
                or (hasattr(i, "function") and uses.declared(i, states=False) & wanted)]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep

    if config.getoption("zr_require_coverage"):
        uncovered = [f"snippets/{rel}" for rel in all_snippets(root) if rel not in coverage]
        items.append(SuiteCheck.from_parent(
            session, name="every-snippet-is-checked", problems=uncovered,
            message="snippets no checker covers (add a test with @pytest.mark.snippet(..., checker=...)):"))
    if whole_suite(config):
        path = declarations_path(config)
        items.append(SuiteCheck.from_parent(
            session, name="declarations-are-current",
            problems=ledger.outdated(coverage, ledger.load_declarations(path)),
            message=f"{path.relative_to(config.rootpath)} does not match the checks collected (+ a line to add, "
                    f"- a line to drop): run `{ledger.REGENERATE}` and commit the file with the change"))
    target = config.getoption("zr_declarations")
    if target:
        if not whole_suite(config):
            raise pytest.UsageError("--zr-declarations needs the whole suite on every host: "
                                    "--zr-require-coverage checks, ZR_HOSTS unset")
        ledger.save_declarations(coverage, Path(target))


def declarations_path(config) -> Path:
    """The committed declarations of this tree (a copy of the project has its own)."""
    return Path(config.rootpath) / ledger.DECLARATIONS.relative_to(ledger.ROOT)


def whole_suite(config) -> bool:
    """Did this run collect every check? Only then may the results forget checks it did not see: the whole
    of checks/ (``--zr-require-coverage``, make check's default) on every host (a run narrowed with ZR_HOSTS
    collects no test of the other host, whose results must stay)."""
    from checks.hosts.plugin import ALL_HOSTS, selected_hosts

    return bool(config.getoption("zr_require_coverage")) and set(selected_hosts()) == set(ALL_HOSTS)


def ran_through(config, exitstatus) -> bool:
    """May this run's recorded inputs replace the earlier ones (forgetting tests it did not run)? Only when it
    collected the whole suite and ran it to its end: an interrupted run (Ctrl-C, or tox stopping it) knows neither
    which tests it did not reach nor, under xdist, which verdicts it reused, and once forgot every verdict here."""
    return whole_suite(config) and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


class ResultsRecorder:
    """Writes the results at the end of the session (on the xdist controller, which sees every report)."""

    def __init__(self, config, path: Path):
        self.config = config
        self.path = path
        self.runs: dict[tuple, dict] = {}
        self.inputs: dict[str, dict] = {}
        self.digests: dict[tuple[str, str], str | None] = {}
        self.reused: list[str] | None = None  # node ids whose last verdict stands (checks/reuse.py)
        self.ran_why: dict[str, int] | None = None  # why the others ran, and how many for each reason
        self.failed: set[str] = set()
        self.coverage: dict | None = None
        self.root = snippet_root(config)
        self.stamp = ledger.provenance(Path(config.rootpath))

    @pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
    def pytest_testnodedown(self, node, error):
        reused = getattr(node, "workeroutput", {}).get("zr_reused")
        if reused is not None and self.reused is None:
            self.reused = reused
            self.ran_why = node.workeroutput.get("zr_ran_why", {})
        coverage = getattr(node, "workeroutput", {}).get("zr_coverage")
        if coverage is not None and self.coverage is None:
            self.coverage = coverage

    def pytest_runtest_logreport(self, report):
        if report.outcome == "failed":
            self.failed.add(report.nodeid)
        read = dict(report.user_properties).get("zr_inputs")
        if read is not None and report.when == "teardown":
            outcome = "failed" if report.nodeid in self.failed else "passed"
            self.inputs[ledger.test_id(report.nodeid)] = {
                "outcome": outcome,
                **{kind: {rel: self.digest(kind, rel) for rel in read[kind]} for kind in observe.KINDS},
                **{key: read[key] for key in (*observe.KEYS, "code", "undeclared")},
                **({"unseen": read["unseen"]} if read.get("unseen") else {})}
        props = [v for k, v in report.user_properties if k == "zr_snippet"]
        index = dict(v for k, v in report.user_properties if k == "zr_host_index")
        if not props:
            return
        if report.when == "call" or report.outcome in ("failed", "skipped"):
            for rel, checker, host in props:
                key = (rel, checker, host or ledger.STATIC, ledger.test_id(report.nodeid))
                prev = self.runs.get(key)
                if prev and prev["outcome"] == "failed":
                    continue
                self.runs[key] = {"snippet": rel, "checker": checker, "host": host, "test": key[3],
                                  "outcome": report.outcome, "sha256": digest(rel, self.root), **self.stamp}
                if index.get(host, "verified") != "verified":
                    # the host image was built from a Debian index that did not match the signed Release
                    self.runs[key]["index"] = index[host]

    def digest(self, kind: str, rel: str) -> str | None:
        """A file's sha256, read once per run however many tests read it."""
        if (kind, rel) not in self.digests:
            self.digests[kind, rel] = reuse.current(kind, rel)
        return self.digests[kind, rel]

    def pytest_terminal_summary(self, terminalreporter):
        reused = self.reused if self.reused is not None else getattr(self.config, "zr_reused", None)
        if reused:
            terminalreporter.write_line(
                f"reused: {len(reused)} verdicts of tests whose inputs did not change since they last passed here "
                "(checks/reuse.py; make check ALL=1 runs every test)")
            why = self.ran_why if self.ran_why is not None else getattr(self.config, "zr_ran_why", {})
            for reason, count in list(why.items())[:10]:
                terminalreporter.write_line(f"ran: {count} because {reason}")
            if len(why) > 10:
                terminalreporter.write_line(f"ran: {sum(list(why.values())[10:])} for {len(why) - 10} other reasons")

    def pytest_sessionfinish(self, session):
        reused = self.reused if self.reused is not None else getattr(self.config, "zr_reused", None)
        if reused and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK  # every test's verdict stands: nothing had to run
        coverage = self.coverage if self.coverage is not None else getattr(self.config, "zr_coverage", None)
        data = ledger.load(self.path)
        if coverage is not None:
            ledger.record_checks(data, coverage, complete=whole_suite(self.config))
        ledger.record_runs(data, [self.runs[k] for k in sorted(self.runs)])
        reused = self.reused if self.reused is not None else getattr(self.config, "zr_reused", [])
        ledger.record_inputs(data, {node: {**read, **self.stamp} for node, read in self.inputs.items()},
                             complete=ran_through(self.config, session.exitstatus), kept=reused)
        ledger.mark_reused(data, list(reused), self.stamp)
        ledger.drop_missing(data, self.root)
        ledger.save(data, self.path)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    recorder = observe.recorder()
    if recorder is not None:
        recorder.begin()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """A fixture wider than one test is set up by whichever test of this worker needs it first (xdist's order): what
    it reads meanwhile is set apart, to be judged against its own declarations (checks/observe.py)."""
    recorder = observe.recorder()
    if recorder is None or not recorder.recording or fixturedef.scope == "function":
        return (yield)
    before = recorder.snippets_seen()
    try:
        return (yield)
    finally:
        recorder.shared[fixturedef.argname] = (fixturedef, request.node, recorder.snippets_seen() - before)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After the test's own fixtures are gone (a fresh container's last reads drained before its removal): what the
    test read goes with its teardown report to the results (checks/observe.py)."""
    try:
        return (yield)
    finally:
        recorder = observe.recorder()
        if recorder is not None:
            read = recorder.end()
            shared = getattr(recorder, "shared", {})
            by_fixtures = set().union(*(rels for _, _, rels in shared.values()))
            undeclared = (sorted(set(read["snippets"]) - by_fixtures - uses.declared(item))
                          if hasattr(item, "function") else [])
            fixtures = {}
            for name, (fixturedef, node, rels) in sorted(shared.items()):
                missing = rels - uses.fixture_declared(fixturedef, node)
                if missing:  # declared by every test that uses the fixture counts too: the same in any order
                    missing -= uses.declared_by_every_user(item.session, name, node)
                fixtures[name] = sorted(missing)
            item.user_properties.append(("zr_inputs", {**read, "code": reuse.code_digest(Path(item.path)),
                                                       "unseen": reuse.unseen(getattr(item, "fixturenames", ())),
                                                       "undeclared": undeclared,
                                                       "undeclared_by_fixtures": {n: r for n, r in fixtures.items()
                                                                                  if r}}))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that read a snippet it does not declare (checks/uses.py), or during which a fixture wider than one test
    read one the fixture does not declare, fails at its teardown, naming what to add; ZR_UNDECLARED=report only
    records it in the results. A wider fixture's reads are judged against the fixture's own declarations, so the
    verdict does not depend on which test xdist lets set it up."""
    report = yield
    if call.when == "teardown" and os.environ.get("ZR_UNDECLARED", "fail") == "fail":
        inputs = dict(item.user_properties).get("zr_inputs", {})
        undeclared, fixtures = inputs.get("undeclared"), inputs.get("undeclared_by_fixtures") or {}
        if (undeclared or fixtures) and report.outcome != "failed":
            report.outcome = "failed"
            report.longrepr = "\n\n".join([*([uses.message(item.nodeid, undeclared)] if undeclared else []),
                                            *(uses.fixture_message(n, r) for n, r in fixtures.items())])
    return report


class Timeline:
    """Where a run's time went: one line per test (the worker, when its setup began and its teardown ended, in
    seconds from the first test), written next to the results as check-timeline.tsv; then each worker's busy time
    against the run's span. For finding what to make faster, not a result: nothing reads it back."""

    def __init__(self, path: Path):
        self.path = path
        self.rows: dict[str, list] = {}

    def pytest_runtest_logreport(self, report):
        node = getattr(report, "node", None)
        worker = node.gateway.id if node is not None else "main"
        row = self.rows.setdefault(report.nodeid, [worker, report.start, report.stop])
        row[1], row[2] = min(row[1], report.start), max(row[2], report.stop)

    def pytest_terminal_summary(self, terminalreporter):
        if not self.rows:
            return
        t0 = min(r[1] for r in self.rows.values())
        span = max(r[2] for r in self.rows.values()) - t0
        busy: dict[str, float] = {}
        lines = ["worker\tstart_s\tseconds\ttest"]
        for nodeid, (worker, start, stop) in sorted(self.rows.items(), key=lambda kv: kv[1][1]):
            busy[worker] = busy.get(worker, 0.0) + stop - start
            lines.append(f"{worker}\t{start - t0:.1f}\t{stop - start:.2f}\t{nodeid}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + "\n")
        terminalreporter.write_line(
            f"timeline: {span:.0f} s from the first test to the last; busy " +
            ", ".join(f"{w} {s:.0f} s" for w, s in sorted(busy.items())) + f" ({self.path})")


def pytest_configure(config):
    if not config.option.collectonly:
        observe.start()  # records only between a test's setup and teardown: in the process that runs the tests
    path = config.getoption("zr_results")
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(ResultsRecorder(config, Path(path)), "zr-results")
        config.pluginmanager.register(Timeline(Path(path).with_name("check-timeline.tsv")), "zr-timeline")
