"""The deployer's bundle holds every snippet byte for byte, with a manifest that does not overclaim."""

import hashlib
import json
import tarfile

from zrunbook import bundle


def test_bundle_holds_every_snippet_byte_identical_with_its_sha256(tmp_path):
    out = bundle.write_bundle(tmp_path / "b.tar.gz")
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
                f"{rel} has no checker in the manifest: the committed ledger.json predates it. "
                "Run `make check` once (it rewrites ledger.json) and commit ledger.json with the snippet.")


def test_manifest_reports_a_result_for_other_bytes_as_stale_never_passed():
    real = sorted(p.relative_to(bundle.SNIPPETS).as_posix() for p in bundle.SNIPPETS.rglob("*.sh"))[0]
    check = {"checker": "shellcheck", "host": None, "test": "t"}
    old = {**check, "outcome": "passed", "sha256": "0" * 64, "date": "2026-01-01", "commit": "abc1234"}
    rows = {r["path"]: r for r in bundle.manifest({"snippets": {real: {"checks": [check], "runs": [old]}}})}
    assert rows[real]["checks"] == [{"checker": "shellcheck", "host": "static", "last_result": "stale",
                                     "checked": "2026-01-01", "commit": "abc1234"}]


def test_a_site_profile_puts_its_values_into_the_bundle_s_site_env_and_no_pin(tmp_path):
    """make bundle PROFILE=...: the deployer's site.env holds the values make verify checks, and sources cleanly."""
    import subprocess

    from zrunbook.verify import profile as prof

    site = prof.load(bundle.SNIPPETS / "verify/site-profile.toml")
    out = bundle.write_bundle(tmp_path / "b.tar.gz", site=site)
    with tarfile.open(out) as tar:
        env = tar.extractfile("zrunbook-snippets/site.env").read().decode()
    said = "echo $APACHE_TOKEN_LABEL $APACHE_SERVICE_USER $APACHE_ENDPOINT"
    shown = subprocess.run(["bash", "-c", f"set -eu; {env}\n{said}"], capture_output=True, text=True,
                           check=True).stdout.split()
    server = site.server("apache")
    assert shown == [site.token(server["token"]).label, server["user"], server["endpoint"]]
    assert "TOKEN_USER_PIN=" not in env
