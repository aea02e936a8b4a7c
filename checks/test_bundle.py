"""The deployer's bundle holds every snippet byte for byte, with a manifest that does not overclaim.

The manifest's checkers come from the committed declarations, its results from a results file the test writes
itself (never the checkout's build/results.json, which another run may have written or not)."""

import hashlib
import json
import tarfile

import pytest

from zrunbook import bundle, ledger


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_bundle_holds_every_snippet_byte_identical_with_its_sha256(tmp_path):
    out = bundle.write_bundle(tmp_path / "b.tar.gz", results=tmp_path / "no-run.json")
    with tarfile.open(out) as tar:
        manifest = json.load(tar.extractfile("zrunbook-snippets/MANIFEST.json"))
        rows = {r["path"]: r for r in manifest["snippets"]}
        files = sorted(p.relative_to(bundle.SNIPPETS).as_posix() for p in bundle.SNIPPETS.rglob("*") if p.is_file())
        assert sorted(rows) == files
        for rel in files:
            data = tar.extractfile(f"zrunbook-snippets/{rel}").read()
            assert data == (bundle.SNIPPETS / rel).read_bytes()
            assert hashlib.sha256(data).hexdigest() == rows[rel]["sha256"]
            assert rows[rel]["checks"], (
                f"{rel} has no checker in the manifest: zrunbook/declarations.tsv predates it. "
                f"Run `{ledger.REGENERATE}` and commit zrunbook/declarations.tsv with the snippet.")
        # no run recorded (a fresh clone): every declared check says so, none says passed
        assert manifest["results"] is None
        assert {c["last_result"] for r in rows.values() for c in r["checks"]} == {"not run"}


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_the_manifest_reports_the_results_of_this_checkout_s_run(tmp_path):
    """A results file as make check writes it: a pass of the current bytes by every declared test of one file."""
    rel = "crypto/packages/verify-packages.sh"
    checks = ledger.load_declarations()[rel]
    runs = [{**c, "outcome": "passed", "sha256": bundle.digest(rel), "date": "2026-11-30", "commit": "abc1234"}
            for c in checks]
    ledger.save({"format": ledger.FORMAT, "snippets": {rel: {"checks": checks, "runs": runs}}},
                tmp_path / "results.json")
    bundle.write_bundle(tmp_path / "b.tar.gz", results=tmp_path / "results.json")
    manifest = json.loads((tmp_path / "MANIFEST.json").read_text())
    assert manifest["results"] == "results.json"
    rows = {r["path"]: r for r in manifest["snippets"]}
    assert {(c["last_result"], c["checked"], c["commit"]) for c in rows[rel]["checks"]} == {
        ("passed", "2026-11-30", "abc1234")}
    assert {c["last_result"] for r in rows.values() if r["path"] != rel for c in r["checks"]} == {"not run"}


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_manifest_reports_a_result_for_other_bytes_as_stale_never_passed():
    real = sorted(p.relative_to(bundle.SNIPPETS).as_posix() for p in bundle.SNIPPETS.rglob("*.sh"))[0]
    check = {"checker": "shellcheck", "host": None, "test": "t"}
    old = {**check, "outcome": "passed", "sha256": "0" * 64, "date": "2026-01-01", "commit": "abc1234"}
    rows = {r["path"]: r for r in bundle.manifest({"snippets": {real: {"checks": [check], "runs": [old]}}})}
    assert rows[real]["checks"] == [{"checker": "shellcheck", "host": "static", "last_result": "stale",
                                     "checked": "2026-01-01", "commit": "abc1234"}]


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_a_site_profile_puts_its_values_into_the_bundle_s_site_env_and_no_pin(tmp_path):
    """make bundle PROFILE=...: the deployer's site.env holds the values make verify checks, and sources cleanly."""
    import subprocess

    from zrunbook.verify import profile as prof

    site = prof.load(bundle.SNIPPETS / "verify/site-profile.toml")
    out = bundle.write_bundle(tmp_path / "b.tar.gz", results=tmp_path / "no-run.json", site=site)
    with tarfile.open(out) as tar:
        env = tar.extractfile("zrunbook-snippets/site.env").read().decode()
    said = "echo $APACHE_TOKEN_LABEL $APACHE_SERVICE_USER $APACHE_ENDPOINT"
    shown = subprocess.run(["bash", "-c", f"set -eu; {env}\n{said}"], capture_output=True, text=True,
                           check=True).stdout.split()
    server = site.server("apache")
    assert shown == [site.token(server["token"]).label, server["user"], server["endpoint"]]
    assert "TOKEN_USER_PIN=" not in env


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_the_bundle_holds_the_fixed_versions_rows_the_exporter_reads_beside_it(tmp_path):
    """The monitoring exporter's default rows file (crypto/verify/fixed-versions.args, relative to monitor/) is in
    the archive, one argument per line, the same arguments verify gives check-fixed-versions.sh."""
    from zrunbook.crypto.fixed_versions import arguments

    out = bundle.write_bundle(tmp_path / "b.tar.gz", results=tmp_path / "no-run.json")
    with tarfile.open(out) as tar:
        rows = tar.extractfile(f"zrunbook-snippets/{bundle.FIXED_ARGS}").read().decode()
    assert rows.splitlines() == arguments()
    assert "debian 13" in rows.splitlines()
    assert "not affected" in rows.splitlines()
    exporter = (bundle.SNIPPETS / "monitor/zrunbook-textfile.sh").read_text()
    assert "$here/../" + bundle.FIXED_ARGS in exporter
