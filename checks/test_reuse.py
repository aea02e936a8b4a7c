"""The one-change loop (checks/reuse.py): a recorded verdict stands only while nothing the test read or runs changed.

Each case takes a real test of this suite (its file, its code digest) and the inputs a run recorded, then changes
one thing: the test's own snippet must make it run again, a snippet it never read must not."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from checks import reuse
from zrunbook.snippets import digest

TEST_FILE = Path(__file__).resolve().parents[0] / "ihs" / "test_apache_cold_start.py"
READ = "ihs/apache/check-cold-start.sh"
OTHER = "crypto/token/init-token.sh"


def item(*markers: str, fixtures=("host",)):
    marks = {name: SimpleNamespace(args=("why",)) for name in markers}
    return SimpleNamespace(path=str(TEST_FILE), fixturenames=list(fixtures), get_closest_marker=marks.get)


def recorded(**change) -> dict:
    entry = {"outcome": "passed", "code": reuse.code_digest(TEST_FILE), "snippets": {READ: digest(READ)},
             "facts": {}, "bad": {}, "files": {}, "images": {"debian13-amd64": reuse.image_tags()["debian13-amd64"]},
             "states": {}}
    entry.update(change)
    return entry


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_a_passed_test_whose_inputs_are_unchanged_is_reused():
    assert reuse.why_not(item(), recorded(), "debian13-amd64") is None


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_an_edit_of_a_snippet_the_test_read_runs_it_again_and_one_it_never_read_does_not():
    assert reuse.why_not(item(), recorded(snippets={READ: "0" * 64}), "debian13-amd64") == f"snippets {READ} changed"
    assert reuse.why_not(item(), recorded(snippets={READ: digest(READ)}), "debian13-amd64") is None
    assert OTHER not in recorded()["snippets"]  # so an edit of OTHER leaves the verdict standing


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
@pytest.mark.parametrize(("change", "why"), [
    ({"outcome": "failed"}, "no passing run recorded here"),
    ({"code": "0" * 64}, "its code changed"),
    ({"facts": {"crypto/tls-policy.csv": "0" * 64}}, "facts crypto/tls-policy.csv changed"),
    ({"images": {"debian13-amd64": "zrunbook/debian13-amd64:000000000000"}}, "the debian13-amd64 image changed"),
    ({"states": {"debian13-amd64-unknown": "x"}}, "it started from states reuse cannot recompute"),
])
@pytest.mark.negative(invariant="a recorded verdict stands only while its inputs are unchanged",
                      expects="a failed run, changed code, table or image, or an unknown state runs the test again")
def test_a_failed_run_changed_code_a_changed_table_or_image_or_an_unknown_state_runs_it_again(change, why):
    assert reuse.why_not(item(), recorded(**change), "debian13-amd64").startswith(why)


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_a_state_a_fixture_started_the_test_from_is_recomputed_by_its_name():
    """A test that a fixture or helper started from a prepared state (Pool.prepared, no from_state mark) records the
    state's tag; reuse finds the State by its name and compares, instead of always running the test."""
    from checks.hosts.apache import TOKEN_KEY

    name = f"debian13-amd64-{TOKEN_KEY.name}"
    assert reuse.state_named(name) == ("debian13-amd64", TOKEN_KEY)
    tag = reuse.state_tag("debian13-amd64", TOKEN_KEY)
    assert reuse.why_not(item(), recorded(states={name: tag}), "debian13-amd64") is None
    assert reuse.why_not(item(), recorded(states={name: tag[:-1] + "x"}), "debian13-amd64") == \
        f"the state {name} changed"
    assert reuse.state_named("debian13-amd64-unknown") is None


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_timing_claims_always_run():
    assert reuse.why_not(item("exclusive_cpu"), recorded(), "debian13-amd64") == "a timing claim (exclusive_cpu)"


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_what_the_observer_cannot_see_is_keyed_on_the_tree_and_for_the_guide_on_its_badges():
    site, copy = item(fixtures=("site", "base_url")), item(fixtures=("tree",))
    keys = reuse.unseen(site.fixturenames)
    assert set(keys) == {"tree", "badges"}
    assert set(reuse.unseen(copy.fixturenames)) == {"tree"}
    assert reuse.unseen(item().fixturenames) == {}
    assert reuse.unseen(item(fixtures=("clean_host",)).fixturenames) == {}  # a walk reads the pages in this process
    assert reuse.why_not(site, recorded(unseen=keys), None) is None
    assert reuse.why_not(copy, recorded(unseen={"tree": keys["tree"]}), None) is None
    assert reuse.why_not(site, recorded(), None).startswith("the tree changed")  # recorded before keys existed
    assert reuse.why_not(site, recorded(unseen={**keys, "tree": "0" * 64}), None).startswith("the tree changed")
    assert reuse.why_not(site, recorded(unseen={**keys, "badges": "0" * 64}), None) == \
        "the badges the guide shows changed"


def test_the_tree_digest_sees_an_edit_and_a_new_file_but_not_an_ignored_one(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "page.md").write_text("one\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)

    def fresh() -> str:
        reuse.tree_digest.cache_clear()
        return reuse.tree_digest(tmp_path)

    before = fresh()
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.html").write_text("built\n")
    assert fresh() == before
    (tmp_path / "page.md").write_text("two\n")
    edited = fresh()
    assert edited != before
    (tmp_path / "new.md").write_text("untracked, not ignored\n")
    assert fresh() != edited
    reuse.tree_digest.cache_clear()


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_the_badges_digest_follows_outcomes_and_not_the_dates_a_reused_verdict_restamps(tmp_path):
    import json

    from zrunbook import ledger

    rel = "ihs/apache/check-cold-start.sh"
    test = next(c["test"] for c in ledger.read(None)["snippets"][rel]["checks"])
    checker = next(c for c in ledger.read(None)["snippets"][rel]["checks"] if c["test"] == test)

    def results(outcome: str, date: str) -> Path:
        path = tmp_path / f"{outcome}-{date}.json"
        run = {"checker": checker["checker"], "host": checker.get("host"), "test": test, "outcome": outcome,
               "sha256": digest(rel), "date": date, "commit": "abc1234"}
        path.write_text(json.dumps({"format": 1, "snippets": {rel: {"checks": [], "runs": [run]}}}))
        return path

    passed = reuse.badges_digest(results("passed", "2026-11-27"))
    assert reuse.badges_digest(results("passed", "2026-11-28")) == passed
    assert reuse.badges_digest(results("failed", "2026-11-28")) != passed


def test_the_code_a_test_runs_includes_its_imports_the_plugins_and_the_validators_the_registry_loads():
    files = {p.relative_to(reuse.REPO).as_posix() for p in reuse.code_files(TEST_FILE)}
    assert {"checks/ihs/test_apache_cold_start.py", "checks/hosts/apache.py", "checks/observe.py",
            "checks/conftest.py"} <= files
    assert "checks/reuse.py" not in files  # it decides what runs, not what a test asserts
    own = {p.relative_to(reuse.REPO).as_posix() for p in reuse.code_files(Path(__file__).resolve())}
    assert "checks/reuse.py" in own  # but the tests of reuse itself run again when it changes
    static_checks = reuse.REPO / "checks" / "test_static_checkers.py"
    static = {p.relative_to(reuse.REPO).as_posix() for p in reuse.code_files(static_checks)}
    assert {"zrunbook/checkers.toml", "zrunbook/static/shellcheck.py"} <= static


def test_the_host_of_a_test_whose_other_parameters_are_dicts_is_found_without_hashing_them():
    """CI's first run of the loop stopped at collection: a parametrized test's dict parameter went into a set test."""
    from checks import zrunbook_plugin

    item = SimpleNamespace(callspec=SimpleNamespace(params={"change": {"outcome": "failed"}, "host": "debian13-amd64"}))
    assert zrunbook_plugin.host_of(item) == "debian13-amd64"
    only_dicts = SimpleNamespace(callspec=SimpleNamespace(params={"change": {"outcome": "failed"}}))
    assert zrunbook_plugin.host_of(only_dicts) is None


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_a_from_state_mark_counts_only_for_a_test_that_starts_from_it():
    """A module's from_state mark also reaches its tests on the shared `host` (test_bulk_cipher_in_libica.py), which
    record no state: such a test was run again after every passing run. A fresh_host test still compares its state."""
    from checks.hosts.apache import TOKEN_KEY

    def marked(fixtures):
        marks = {"from_state": SimpleNamespace(args=(TOKEN_KEY,))}
        return SimpleNamespace(path=str(TEST_FILE), fixturenames=list(fixtures), get_closest_marker=marks.get)

    name = f"debian13-amd64-{TOKEN_KEY.name}"
    assert reuse.why_not(marked(["host"]), recorded(), "debian13-amd64") is None
    assert reuse.why_not(marked(["fresh_host"]), recorded(), "debian13-amd64") == f"the state {name} changed"
    tag = reuse.state_tag("debian13-amd64", TOKEN_KEY)
    assert reuse.why_not(marked(["fresh_host"]), recorded(states={name: tag}), "debian13-amd64") is None


def test_the_reasons_a_run_gives_are_counted_most_frequent_first():
    assert reuse.reasons([None, "b", "a", "b", None]) == {"b": 2, "a": 1}
    assert list(reuse.reasons(["z", "a"])) == ["a", "z"]


def test_a_file_s_imports_are_parsed_again_once_it_changes():
    """The imports are parsed once per version of a file (80 s saved before the first test): an edit must count."""
    from checks.hosts.steps import _project_imports

    folder = reuse.REPO / "build" / "reuse-probe"
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / "probe.py"
    probe.write_text("from zrunbook import ledger\n")
    assert reuse.REPO / "zrunbook" / "ledger.py" in _project_imports(probe)
    probe.write_text("from zrunbook import registry  # and longer\n")
    found = _project_imports(probe)
    assert reuse.REPO / "zrunbook" / "registry.py" in found
    assert reuse.REPO / "zrunbook" / "ledger.py" not in found


@pytest.mark.uses("ihs/apache/check-cold-start.sh")
def test_a_parameter_named_like_a_guide_fixture_is_not_the_guide():
    """test_apache_tls.py parametrizes `site` with a site configuration: pytest lists it among the fixture names,
    and the two testssl scans (95-155 s each) were keyed on the whole tree and ran after every edit."""
    def parametrized(argnames, fixtures, **kwargs):
        mark = SimpleNamespace(args=(argnames, []), kwargs=kwargs)
        return SimpleNamespace(path=str(TEST_FILE), fixturenames=list(fixtures), get_closest_marker={}.get,
                               iter_markers=lambda name: [mark] if name == "parametrize" else [])

    configuration = parametrized("site", ["fresh_host", "site"])
    assert reuse.fixtures(configuration) == {"fresh_host"}
    assert reuse.unseen(reuse.fixtures(configuration)) == {}
    assert reuse.why_not(configuration, recorded(), "debian13-amd64") is None
    assert reuse.fixtures(parametrized("site, scheme", ["site", "scheme", "page"])) == {"page"}
    assert reuse.fixtures(parametrized(["site"], ["site"], indirect=True)) == {"site"}  # the fixture, given a value
    assert set(reuse.unseen(reuse.fixtures(parametrized("scheme", ["browser", "scheme"])))) == {"tree", "badges"}
