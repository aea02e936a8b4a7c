"""Every static checker of zrunbook/checkers.toml over every snippet its ``files`` match, and over every negative
case its ``bad`` globs match (the Kubernetes examples_test.go pattern): a new snippet of a known kind needs no
new test. Each negative case must be rejected for the reason its header declares (zrunbook/negatives.py). The
registry itself must reject an entry it cannot honour, naming the checker."""

from __future__ import annotations

from pathlib import Path

import pytest

from zrunbook import ROOT, SNIPPETS, negatives, registry

CHECKS = ROOT / "checks"


@pytest.mark.parametrize(("checker", "rel"), [
    pytest.param(name, rel, marks=[pytest.mark.snippet(rel, checker=name), pytest.mark.uses(*registry.reads(name))],
                 id=f"{name}:{rel}")
    for name, rel in registry.cases()])
def test_static_checker_accepts_the_snippet(checker, rel):
    assert registry.problems(checker, SNIPPETS / rel) == []


@pytest.mark.negative(invariant="a static checker rejects each of its bad files as the file's header says",
                      expects="the validator reports a problem containing the header's rejects: text")
@pytest.mark.parametrize(("checker", "rel"), [pytest.param(name, rel, marks=pytest.mark.uses(*registry.reads(name)),
                                                           id=f"{name}:{rel}")
                                              for name, rel in registry.bad_cases()])
def test_static_checker_rejects_its_negative_case_as_its_header_says(checker, rel):
    """Rejected, and for the reason the file declares (``rejects:`` in its header, zrunbook/negatives.py)."""
    found = registry.problems(checker, CHECKS / rel)
    assert negatives.rejection_problem(negatives.declaration(rel), checker, found) is None


# --- the registry rejects what it cannot honour ------------------------------------------------------------

VOCABULARY = """
[evidence.ran]
badge = "ran"
badge_program = "ran ({program})"
means = "the real program ran it"

[evidence.harness]
badge = "project harness"
badge_program = "{program}, project harness"
means = "a library ran under the project's harness"

[evidence.stand-in]
badge = "stand-in"
means = "a stand-in ran it"

[evidence.form]
badge = "form checked"
means = "a validator read it"
"""

GOOD = VOCABULARY + """
[shellcheck]
kind = "static"
evidence = "form"
what = "shellcheck"
validator = "zrunbook.static.shellcheck:file_problems"
files = ["**/*.sh"]
bad = ["static/bad/*.sh"]
"""


def load(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "checkers.toml"
    path.write_text(text, encoding="utf-8")
    return registry.load(path)


def test_registry_accepts_a_well_formed_entry(tmp_path):
    assert list(load(tmp_path, GOOD)) == ["shellcheck"]


@pytest.mark.negative(invariant="zrunbook/checkers.toml's entries are well formed",
                      expects="RegistryError naming the checker and what is wrong with its entry")
@pytest.mark.parametrize(("change", "message"), [
    (('what = "shellcheck"', 'what = "shellcheck"\nseverity = "style"'),
     "checker 'shellcheck': unknown key(s) severity"),
    (('files = ["**/*.sh"]', 'files = ["nowhere/*.sh"]'),
     "checker 'shellcheck': files glob 'nowhere/*.sh' matches no file under snippets/"),
    (('bad = ["static/bad/*.sh"]', 'bad = ["static/bad/*.nothing"]'),
     "checker 'shellcheck': bad glob 'static/bad/*.nothing' matches no file under checks/"),
    (("zrunbook.static.shellcheck:file_problems", "zrunbook.static.no_such_module:file_problems"),
     "checker 'shellcheck': validator 'zrunbook.static.no_such_module:file_problems' does not import"),
    (("zrunbook.static.shellcheck:file_problems", "zrunbook.static.shellcheck:no_such_function"),
     "checker 'shellcheck': validator 'zrunbook.static.shellcheck:no_such_function' does not import"),
    (('validator = "zrunbook.static.shellcheck:file_problems"\n', ""),
     "checker 'shellcheck': missing key(s) validator"),
    (('kind = "static"', 'kind = "dynamic"'), "checker 'shellcheck': kind must be one of static, host"),
    (('evidence = "form"', 'evidence = "real"'),
     "checker 'shellcheck': evidence must be one of ran, harness, stand-in, form, not 'real'"),
    (('evidence = "form"\n', ""), "checker 'shellcheck': missing key(s) evidence"),
])
def test_registry_rejects_a_wrong_entry_naming_the_checker(tmp_path, change, message):
    with pytest.raises(registry.RegistryError) as info:
        load(tmp_path, GOOD.replace(*change))
    assert message in str(info.value)


@pytest.mark.negative(invariant="zrunbook/checkers.toml's entries are well formed",
                      expects="RegistryError: a host checker with files: has an unknown key")
def test_registry_rejects_a_static_key_on_a_host_checker(tmp_path):
    with pytest.raises(registry.RegistryError, match=r"checker 'testinfra': unknown key\(s\) files"):
        load(tmp_path, VOCABULARY + '[testinfra]\nkind = "host"\nevidence = "ran"\nwhat = "x"\nfiles = ["**/*.sh"]\n')


def test_a_host_checker_may_name_the_program_that_ran_and_the_badge_says_it(tmp_path):
    assert registry.evidence("db2cli") == "ran (GSKit 8.0.60.5)"
    assert registry.evidence("gskit-server") == "GSKit 8.0.60.5, project harness"
    assert registry.evidence("testinfra") == "ran"
    with pytest.raises(registry.RegistryError, match=r"checker 'x': program names the library that ran, so evidence "
                                                     r"must be one of ran, harness, not 'stand-in'"):
        load(tmp_path, VOCABULARY + '[x]\nkind = "host"\nevidence = "stand-in"\nwhat = "x"\nprogram = "GSKit"\n')


def test_a_harness_checker_must_name_the_library_it_drove(tmp_path):
    assert list(load(tmp_path, VOCABULARY + '[x]\nkind = "host"\nevidence = "harness"\nwhat = "x"\n'
                                            'program = "GSKit 8.0.60.5"\n')) == ["x"]
    with pytest.raises(registry.RegistryError, match=r"checker 'x': evidence 'harness' must name the library"):
        load(tmp_path, VOCABULARY + '[x]\nkind = "host"\nevidence = "harness"\nwhat = "x"\n')


def test_the_evidence_vocabulary_is_in_the_registry_and_each_kind_says_what_it_means(tmp_path):
    """One source for the names the badges, the front page and the checkers use: checkers.toml's [evidence]."""
    assert list(registry.vocabulary()) == ["ran", "harness", "stand-in", "form"]
    assert all(k["means"] and k["badge"] for k in registry.vocabulary().values())
    assert {e["evidence"] for e in registry.checkers().values()} <= set(registry.vocabulary())
    with pytest.raises(registry.RegistryError, match=r"\[evidence.NAME\] tables are missing"):
        load(tmp_path, GOOD.removeprefix(VOCABULARY))
    with pytest.raises(registry.RegistryError, match=r"evidence 'form': missing key\(s\) means"):
        load(tmp_path, GOOD.replace('means = "a validator read it"\n', ""))


def test_validator_names_only_static_checkers():
    assert registry.validator("db2-clp").__name__ == "file_problems"
    with pytest.raises(KeyError, match="'testinfra' is not a static checker"):
        registry.validator("testinfra")
