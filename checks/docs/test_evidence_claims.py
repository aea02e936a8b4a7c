"""A page's claim about what kind of evidence a file had ({evidence}`KIND <path>`) must be a kind the file's badges
carry; the front page's list of kinds is made from the registry ({evidence-kinds})."""

import re

import pytest

from checks.sphinx_roots import CONF, EXTENSIONS
from zrunbook import ROOT, ledger, registry

ROLE = re.compile(r"\{evidence\}`(?P<kind>[\w-]+)\s*<(?P<rel>[^<>`]+)>`")

CONF_FILE = "ihs/httpd/site.conf"
SNIPPETS = {CONF_FILE: {"checks": [
    {"checker": "httpd-t", "host": "debian13-amd64", "test": "checks/ihs/test_x.py::test_lint"},
    {"checker": "gskit-server", "host": "debian13-amd64", "test": "checks/ihs/test_x.py::test_serve"},
]}}


def _guide(root, claim: str) -> str:
    root.write("conf.py", CONF.replace(repr(EXTENSIONS), repr([*EXTENSIONS, "evidence"])))
    root.write(f"snippets/{CONF_FILE}", "SSLEnable\n")
    root.ledger(SNIPPETS, ran=False)
    return root.add_page("claims", f"# Claims\n\n```{{snippet}} {CONF_FILE}\n```\n\nIts TLS: {claim}.\n")


def test_a_claim_the_badges_carry_renders_the_badges_words(sphinx_root):
    page = _guide(sphinx_root, f"{{evidence}}`harness <{CONF_FILE}>`")
    build = sphinx_root.build("html")
    assert build.returncode == 0, build.log
    claim = build.html(page.removesuffix(".md")).select("p:not(.zr-badges) span.zr-evidence-harness")
    assert [c.get_text() for c in claim] == [registry.evidence("gskit-server")] == ["GSKit 8.0.60.5, project harness"]


@pytest.mark.negative(invariant="an {evidence} claim is what the file's badges say",
                      expects="the build fails at page and line: claims 'ran' where the badges say harness, stand-in")
def test_a_page_saying_ran_about_a_file_whose_badges_do_not_fails_the_build_naming_page_and_line(sphinx_root):
    """The negative case: httpd.conf's badges say stand-in and project harness; IHS itself never ran it."""
    _guide(sphinx_root, f"{{evidence}}`ran <{CONF_FILE}>`")
    build = sphinx_root.build("html")
    assert build.returncode != 0
    assert (f"claims.md:6: {{evidence}} claims 'ran' for {CONF_FILE}, but its badges carry only: "
            "harness (gskit-server); stand-in (httpd-t)") in build.log, build.log


@pytest.mark.negative(invariant="an {evidence} claim is what the file's badges say",
                      expects="the build fails: not an evidence kind of zrunbook/checkers.toml; names a file which no "
                              "declared test checks")
def test_an_unknown_kind_or_an_unchecked_file_fails_the_build(sphinx_root):
    _guide(sphinx_root, f"{{evidence}}`real <{CONF_FILE}>` and {{evidence}}`ran <ihs/httpd/other.conf>`")
    build = sphinx_root.build("html")
    assert build.returncode != 0
    assert "claims.md:6: {evidence} 'real' is not an evidence kind of zrunbook/checkers.toml" in build.log, build.log
    assert "{evidence} names ihs/httpd/other.conf, which no declared test checks" in build.log, build.log


def test_the_list_of_kinds_is_the_registrys(sphinx_root):
    sphinx_root.write("conf.py", CONF.replace(repr(EXTENSIONS), repr([*EXTENSIONS, "evidence"])))
    page = sphinx_root.add_page("kinds", "# Kinds\n\n```{evidence-kinds}\n```\n")
    build = sphinx_root.build("html")
    assert build.returncode == 0, build.log
    items = [li.get_text(" ", strip=True).replace("\u2019", "'")  # Sphinx's smart quotes back to the registry's
             for li in build.html(page.removesuffix(".md")).select("ul.zr-evidence-kinds > li")]
    assert len(items) == len(registry.vocabulary()), items
    for item, (name, kind) in zip(items, registry.vocabulary().items(), strict=True):
        assert item.startswith(kind["badge"]), item
        assert f"{kind['means']}." in item, item
        assert name == kind["badge"] or f"{kind['badge']} ({name}):" in item, item
    harness = items[list(registry.vocabulary()).index("harness")]
    assert "GSKit 8.0.60.5, project harness" in harness, harness
    assert "gskit-client, gskit-server" in harness, harness


def guide_claims() -> list[tuple[str, int, str, str]]:
    """Every {evidence} claim in the guide's pages: (page, line, kind, snippet), read from the Markdown."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in ROLE.finditer(text):
            found.append((page.relative_to(ROOT).as_posix(), text.count("\n", 0, m.start()) + 1, m["kind"],
                          m["rel"].strip()))
    return found


def test_every_claim_in_the_guide_is_a_kind_the_files_badges_carry():
    """The guide's own claims against the committed declarations, without a build (make check-static): the IHS
    pages, the plug-in page and the WebSEAL page each make at least one."""
    claims = guide_claims()
    declared = ledger.load_declarations()
    problems = [f"{page}:{line}: {why}" for page, line, kind, rel in claims
                if (why := registry.claim_problem(kind, rel, {c["checker"] for c in declared.get(rel, [])}))]
    assert not problems, "\n".join(problems)
    pages = {page for page, *_ in claims}
    assert {"docs/how-to/ihs/03-httpd-conf-ssl.md", "docs/how-to/ihs/06-plugin-to-websphere.md",
            "docs/how-to/webseal/02-webseald-configuration.md"} <= pages, pages


@pytest.mark.negative(invariant="an {evidence} claim is what the file's badges say",
                      expects="the claim is refused: claims 'ran' (or stand-in), but its badges carry only other kinds")
@pytest.mark.parametrize(("kind", "rel", "said"), [
    ("ran", "ihs/httpd/httpd-ssl-current.conf", "claims 'ran' for ihs/httpd/httpd-ssl-current.conf, but its badges "
                                                "carry only: form (gskit-httpd-consistency, pkcs11-library-paths, "
                                                "tls-as-written); harness (gskit-server); stand-in (httpd-t)"),
    ("ran", "ihs/plugin/plugin-cfg-transport.xml", "claims 'ran' for ihs/plugin/plugin-cfg-transport.xml, but its "
                                                   "badges carry only: harness (gskit-client)"),
    ("stand-in", "ihs/plugin/plugin-cfg-transport.xml", "but its badges carry only: harness (gskit-client)"),
])
def test_the_rule_refuses_the_claims_the_issue_found_wrong(kind, rel, said):
    """The negative cases on the real declarations: IHS's httpd.conf never ran in IHS, and the plug-in leg is no
    longer a plain stand-in."""
    declared = ledger.load_declarations()
    why = registry.claim_problem(kind, rel, {c["checker"] for c in declared[rel]})
    assert why is not None
    assert said in why, why
