"""The walkthrough's sequence is read from the pages: toctree order, page order, the chosen tabs."""

from zrunbook import ROOT, walkthrough
from zrunbook.guide import outcomes

FENCE = "`" * 3

INDEX = f"# Chapter\n\n{FENCE}{{walked}}\n{FENCE}\n\n{FENCE}{{toctree}}\n:maxdepth: 1\n\nsecond\nfirst\n{FENCE}\n"
FIRST = f"""# First

{FENCE}{{snippet}} demo/a.sh
{FENCE}

::::{{tabs}}
:::{{group-tab}} Current
{FENCE}{{snippet}} demo/current.sh
:needs: ibm-z
{FENCE}
:::
:::{{group-tab}} 2013 study
{FENCE}{{snippet}} demo/old.sh
{FENCE}
:::
::::

::::{{tabs}}
:::{{group-tab}} RHEL/SLES
{FENCE}{{snippet}} demo/rhel.sh
{FENCE}
:::
::::
"""


def docs(tmp_path):
    root = tmp_path / "docs"
    (root / "how-to" / "demo").mkdir(parents=True)
    (root / "how-to" / "demo" / "index.md").write_text(INDEX)
    (root / "how-to" / "demo" / "first.md").write_text(FIRST)
    (root / "how-to" / "demo" / "second.md").write_text(f"# Second\n\n{FENCE}{{snippet}} demo/b.out\n{FENCE}\n")
    return root


def test_pages_come_in_toctree_order(tmp_path):
    assert walkthrough.chapter("demo", docs(tmp_path)) == ["how-to/demo/second", "how-to/demo/first"]


def test_a_page_gives_its_snippets_in_order_taking_the_chosen_tab(tmp_path):
    walk = walkthrough.steps("how-to/demo/first", ("Current", "Ubuntu/Debian"), docs(tmp_path))
    assert [(s.snippet, s.line, s.tabs, s.needs) for s in walk.steps] == [
        ("demo/a.sh", 3, (), None), ("demo/current.sh", 8, ("Current",), "ibm-z")]
    # a tab set with none of the chosen tabs is reported, never silently dropped
    assert walk.passed_over == ["docs/how-to/demo/first.md:18: tabs RHEL/SLES"]


def test_the_real_crypto_chapter_starts_with_the_install_step_of_the_chosen_distribution():
    first = walkthrough.steps(walkthrough.chapter("crypto")[0], ("Current", "Ubuntu/Debian")).steps
    assert [s.snippet for s in first if s.runs][0] == "crypto/packages/install-packages-debian.sh"
    assert not any("2013" in s.snippet for page in walkthrough.chapter("crypto")
                   for s in walkthrough.steps(page, ("Current", "Ubuntu/Debian")).steps)


def test_a_glob_toctree_gives_the_pages_sorted_without_the_index(tmp_path):
    root = docs(tmp_path)
    (root / "how-to" / "demo" / "index.md").write_text(f"# Chapter\n\n{FENCE}{{toctree}}\n:glob:\n\n*\n{FENCE}\n")
    assert walkthrough.chapter("demo", root) == ["how-to/demo/first", "how-to/demo/second"]


def test_save_as_and_run_are_read_and_a_walk_acts_only_on_what_the_host_has(tmp_path):
    root = docs(tmp_path)
    (root / "how-to" / "demo" / "second.md").write_text(
        f"# Second\n\n{FENCE}{{snippet}} demo/site.conf\n:save-as: /etc/site.conf\n{FENCE}\n\n"
        f"{FENCE}{{snippet}} demo/check.sh\n:run: localhost:443 www.example.com\n:needs: s390x\n{FENCE}\n")
    walk = walkthrough.steps("how-to/demo/second", ("Current",), root)
    assert [(s.snippet, s.saves, s.args, s.acts) for s in walk.steps] == [
        ("demo/site.conf", "/etc/site.conf", "", True), ("demo/check.sh", None, "localhost:443 www.example.com", True)]
    assert walkthrough.acting(("demo",), ("Current",), "amd64", root) == ["demo/a.sh", "demo/site.conf"]
    assert walkthrough.acting(("demo",), ("Current",), "s390x", root) == ["demo/a.sh", "demo/check.sh",
                                                                          "demo/site.conf"]


def test_a_walk_starts_after_the_chapters_the_index_names_and_theirs(tmp_path):
    root = docs(tmp_path)
    for name, after in (("base", ""), ("middle", ":after: base\n"), ("top", ":after: middle base\n")):
        (root / "how-to" / name).mkdir()
        (root / "how-to" / name / "index.md").write_text(f"# {name}\n\n{FENCE}{{walked}}\n{after}{FENCE}\n")
    assert walkthrough.walk_order("top", root) == ("base", "middle", "top")
    assert walkthrough.walk_order("demo", root) == ("demo",)


def test_every_real_how_to_chapter_says_where_its_walk_starts():
    for name in outcomes.chapters(ROOT / "docs"):
        assert walkthrough.walk_order(name)[-1] == name


def test_the_token_page_opens_the_folders_before_its_administrator_initialises_the_token():
    """Walkthrough finding M1: in page order, the token administrator initialised the token before root opened
    its folders. The page now opens them first, and its caption names who initialises (``:as: token-admin``)."""
    runs = [s for s in walkthrough.steps("how-to/crypto/03-opencryptoki", walkthrough.DEBIAN_TABS).steps if s.runs]
    names = [s.snippet for s in runs]
    init = names.index("crypto/token/init-token.sh")
    assert names.index("crypto/token/let-pkcs11-group-store-keys.sh") < init, names
    assert runs[init].user_variable == "TOKEN_ADMIN"
    assert [s.user_variable for s in runs if s.snippet != "crypto/token/init-token.sh"] == [None] * (len(runs) - 1)
