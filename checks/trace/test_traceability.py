"""Every set-up step of the studies is mapped to a page and its snippets, and the mapping is real."""

from pathlib import Path

import pytest

from zrunbook import SNIPPETS
from zrunbook import facts as facts_tables

ROOT = Path(__file__).resolve().parents[2]
ROWS = facts_tables.table("trace/study-steps")
MAIN_STUDY = "ibm-was8-ssl-2013"  # facts/documents.csv


def row_id(row):
    return f"{row['study']}:{row['step'][:40]}"


@pytest.mark.parametrize("row", ROWS, ids=[row_id(r) for r in ROWS])
def test_mapped_page_exists(row):
    assert (ROOT / "docs" / f"{row['page']}.md").is_file(), f"no page docs/{row['page']}.md"


@pytest.mark.parametrize("row", [r for r in ROWS if r["snippets"]],
                         ids=[row_id(r) for r in ROWS if r["snippets"]])
def test_mapped_snippets_exist_and_the_page_shows_one_of_them(row):
    matched = []
    for pattern in row["snippets"].split():
        found = sorted(SNIPPETS.glob(pattern))
        assert found, f"snippets/{pattern} matches no file"
        matched += [p.relative_to(SNIPPETS).as_posix() for p in found]
    page = (ROOT / "docs" / f"{row['page']}.md").read_text(encoding="utf-8")
    assert any(m in page for m in matched), f"docs/{row['page']}.md shows none of {matched}"


def test_every_section_of_the_main_studys_setup_is_mapped():
    """The set-up sections of the main study's table of contents, each mapped at least once."""
    steps = " ".join(r["step"] for r in ROWS if r["study"] == MAIN_STUDY)
    for section in ["Installation requirements", "Kernel parameter requirements", "network setup",
                    "Tuning I/O to a single DASD volume", "Setting DB2 profile variables", "autoconfigure",
                    "buffer pool size", "Network setup", "Linux packages required", "zcrypt device driver",
                    "pkcsslotd", "ICA token", "JCE policy files", "forceSoftwareJCEProviderForLTPA",
                    "IBMPKCS11Impl provider", "PKCS11 group", "cipher suites", "key sizes",
                    "certificate management", "Stashing", "pkcs11 group", "Configuring IBM HTTP server SSL",
                    "Checking the cryptographic setup"]:
        assert section in steps, f"the main study's section {section!r} is not mapped"


@pytest.mark.negative(invariant="the traceability table names pages and snippets that exist",
                      expects="no page docs/how-to/crypto/gone.md; snippets/crypto/nowhere/x.sh matches no file")
def test_a_row_naming_a_missing_page_or_snippet_fails():
    with pytest.raises(AssertionError, match="no page docs/how-to/crypto/gone.md"):
        test_mapped_page_exists({"page": "how-to/crypto/gone"})
    with pytest.raises(AssertionError, match="snippets/crypto/nowhere/x.sh matches no file"):
        test_mapped_snippets_exist_and_the_page_shows_one_of_them(
            {"page": "how-to/crypto/01-adapters", "snippets": "crypto/nowhere/x.sh"})
