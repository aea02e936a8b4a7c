"""The monitoring snippets: the textfile exporter run on a container host with a token, its file checked by
Prometheus's own promtool on the build machine; the alert rules are checked by the static checkers
promtool-rules and promtool-test-rules (zrunbook/checkers.toml, checks/test_static_checkers.py).

amd64 only: the exporter reads flags, a version and a certificate, nothing that depends on the architecture, and
neither host has an AP bus (the adapter metrics need IBM Z: the tests assert that none is made up here).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from checks.hosts import apache
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.token import LABEL, slot_of
from checks.hosts.util import output
from zrunbook import ROOT, SNIPPETS
from zrunbook.crypto.fixed_versions import arguments
from zrunbook.monitor import promtool

EXPORTER = "monitor/zrunbook-textfile.sh"
FIXED_CHECK = "crypto/verify/check-fixed-versions.sh"
RULES = "monitor/zrunbook-alerts.yml"
RULE_TESTS = "monitor/zrunbook-alerts.test.yml"
OUT = "/var/lib/zr-textfile"
SITE_CERT = "/etc/ssl/certs/www.example.com.crt"  # the certificate the token site serves (checks/hosts/apache.py)
WRONG_PIN = "00000000"


def export(host, tmp_path: Path, env: str = "", name: str = "zrunbook.prom") -> tuple[dict[str, float], str]:
    """Runs the exporter as root into OUT, copies its file out, has promtool check it; returns the samples
    (``name{labels}`` -> value) and what the exporter said."""
    host.run_expect([0], f"mkdir -p {OUT}")
    done = host.run(f"{env} bash {snippet_path(EXPORTER)} {OUT}")
    assert done.rc == 0, output(done)
    text = host.check_output(f"cat {OUT}/zrunbook.prom") + "\n"
    copy = tmp_path / name
    copy.write_text(text, encoding="utf-8")
    assert promtool.metrics_problems(copy) == []
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            samples[key] = float(value)
    return samples, done.stdout


def wrong_login(host) -> None:
    host.run(f"runuser -u www-data -- env PKCS11_USER_PIN={WRONG_PIN} p11sak list-key private --slot {slot_of(host)}")


def flags(host) -> str:
    return re.search(r"Flags: (0x[0-9A-F]+)", host.check_output(f"pkcsconf -t -c {slot_of(host)}")).group(1)


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(EXPORTER, checker="promtool-metrics")
def test_a_healthy_token_site_exports_clean_flags_the_version_and_the_served_certificate(fresh_host, tmp_path):
    start_pkcsslotd(fresh_host)
    apache.serve_token(fresh_host)
    samples, said = export(fresh_host, tmp_path, "CERT_CONNECT=127.0.0.1:443 CERT_SERVERNAME=www.example.com")
    assert samples["zrunbook_slotd_up"] == 1
    for flag in ("count_low", "final_try", "locked"):
        assert samples[f'zrunbook_token_user_pin_{flag}{{token="{LABEL}"}}'] == 0, samples
    library = re.search(r"Library Version: ([0-9.]+)", fresh_host.check_output("pkcsconf -i")).group(1)
    assert samples[f'zrunbook_opencryptoki_info{{version="{library}"}}'] == 1, samples
    assert "zrunbook_fixed_versions_status" not in samples, "a patch level without the table's rows"
    assert "no patch-level metric" in said
    end = fresh_host.check_output(f"date -u -d \"$(openssl x509 -noout -enddate -in {SITE_CERT} | cut -d= -f2)\" +%s")
    assert samples['zrunbook_certificate_read{source="127.0.0.1:443"}'] == 1
    assert samples['zrunbook_certificate_not_after_timestamp_seconds{source="127.0.0.1:443"}'] == int(end)
    assert not [k for k in samples if k.startswith("zrunbook_ap_")], "adapter metrics on a host without an AP bus"
    assert "no AP bus here, so no adapter metrics (they need IBM Z)" in said


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(EXPORTER, checker="promtool-metrics")
@pytest.mark.snippet(FIXED_CHECK, checker="testinfra")
def test_the_patch_level_metric_is_the_fixed_versions_check_with_the_table_s_rows(fresh_host, tmp_path):
    """The table's rows as the bundle ships them: status 0 on this Debian 13 (its update carries the fixes). A row
    whose fixed version is newer than the installed package: 1. Rows for another release only: 5, cannot tell,
    never a pass. A rows file that is named but missing: the exporter stops with a sentence."""
    start_pkcsslotd(fresh_host)
    cert = f"CERT_FILE={SITE_CERT}"
    given = f"FIXED_VERSIONS_CHECK={snippet_path(FIXED_CHECK)} FIXED_VERSIONS_ARGS=/tmp/rows"

    def rows(args: list[str]) -> None:
        fresh_host.run_expect([0], "printf '%s\\n' " + " ".join(shlex.quote(a) for a in args) + " >/tmp/rows")

    rows(arguments())
    samples, said = export(fresh_host, tmp_path, f"{cert} {given}", "fixed.prom")
    assert samples["zrunbook_fixed_versions_status"] == 0, said
    assert "patch level: every advisory fixed" in said
    rows(["debian 13", "CVE-2026-23893", "opencryptoki", "99:1"])
    samples, said = export(fresh_host, tmp_path, f"{cert} {given}", "to-update.prom")
    assert samples["zrunbook_fixed_versions_status"] == 1, said
    rows(["sles 16", "CVE-2026-40253", "openCryptoki", "3.27"])
    samples, said = export(fresh_host, tmp_path, f"{cert} {given}", "cannot-tell.prom")
    assert samples["zrunbook_fixed_versions_status"] == 5, said
    assert "cannot tell" in said
    fresh_host.run_expect([0], "rm /tmp/rows")
    refused = fresh_host.run(f"{given} bash {snippet_path(EXPORTER)} {OUT}")
    assert refused.rc == 2, output(refused)
    assert "FIXED_VERSIONS_ARGS: /tmp/rows cannot be read" in refused.stderr, output(refused)


@pytest.mark.only_hosts("debian13-amd64")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(EXPORTER, checker="promtool-metrics")
def test_wrong_pins_show_as_final_try_then_locked_and_the_exporter_never_logs_in(fresh_host, tmp_path):
    """Two wrong user PINs (someone else's): final try = 1; the exporter, run twice, leaves the flags as they
    were (it has no PIN and never logs in); a third wrong PIN: locked = 1. Without a slot daemon: slotd_up = 0
    and no token metric at all. A directory it cannot write: it stops with a sentence."""
    start_pkcsslotd(fresh_host)
    cert = f"CERT_FILE={SITE_CERT}"
    wrong_login(fresh_host)
    wrong_login(fresh_host)
    before = flags(fresh_host)
    assert int(before, 16) & 0x20000, before
    samples, _ = export(fresh_host, tmp_path, cert, "final-try.prom")
    export(fresh_host, tmp_path, cert, "final-try-again.prom")
    assert flags(fresh_host) == before, "the exporter changed the token's PIN counters"
    assert samples[f'zrunbook_token_user_pin_final_try{{token="{LABEL}"}}'] == 1
    assert samples[f'zrunbook_token_user_pin_locked{{token="{LABEL}"}}'] == 0
    assert samples[f'zrunbook_certificate_read{{source="{SITE_CERT}"}}'] == 1
    wrong_login(fresh_host)
    locked, _ = export(fresh_host, tmp_path, cert, "locked.prom")
    assert locked[f'zrunbook_token_user_pin_locked{{token="{LABEL}"}}'] == 1
    fresh_host.run_expect([0], "pkill -STOP -x pkcsslotd")
    try:
        hung, said = export(fresh_host, tmp_path, f"LOOK_SECONDS=3 {cert}", "hung.prom")
    finally:
        fresh_host.run("pkill -CONT -x pkcsslotd")
    assert hung["zrunbook_slotd_up"] == 0
    assert "NOT answering" in said
    assert not [k for k in hung if k.startswith(("zrunbook_token_", "zrunbook_opencryptoki_"))], hung
    refused = fresh_host.run(f"runuser -u www-data -- bash {snippet_path(EXPORTER)} {OUT}")
    assert refused.rc == 2, output(refused)
    assert "run as root" in refused.stderr, output(refused)
    refused = fresh_host.run(f"bash {snippet_path(EXPORTER)} /nonexistent")
    assert refused.rc == 2, output(refused)
    assert "/nonexistent is not a writable directory" in refused.stderr, output(refused)


@pytest.mark.parametrize("bad", sorted(p.name for p in (ROOT / "checks/monitor/bad").glob("*.prom")))
def test_promtool_rejects_malformed_metric_files(bad):
    assert promtool.metrics_problems(ROOT / "checks/monitor/bad" / bad)


def test_a_missing_promtool_is_a_failure_that_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    said = promtool.rules_problems(SNIPPETS / RULES)
    assert said == [promtool.INSTALL]
    assert "install Debian's prometheus package" in said[0]


def test_the_healthy_rule_test_names_every_alert_so_a_new_rule_cannot_fire_unseen():
    """promtool test rules checks only the alerts a test names: the healthy case must name them all."""
    import yaml

    alerts = {r["alert"] for g in yaml.safe_load((SNIPPETS / RULES).read_text())["groups"] for r in g["rules"]}
    healthy = yaml.safe_load((SNIPPETS / RULE_TESTS).read_text())["tests"][0]["alert_rule_test"]
    assert {t["alertname"] for t in healthy if t["exp_alerts"] == []} == alerts
    assert "TokenUserPinFinalTry" in {t["alertname"] for t in
                                      yaml.safe_load((SNIPPETS / RULE_TESTS).read_text())["tests"][1]["alert_rule_test"]
                                      if t["exp_alerts"]}


@pytest.mark.snippet(RULE_TESTS, checker="promtool-test-rules")
def test_the_rule_tests_fail_when_a_final_try_would_not_alert(tmp_path):
    """The page's outcome check against rules that miss its purpose: the final-try rule dropped from a copy of the
    rules, promtool test rules with the snippet's test file must fail, naming TokenUserPinFinalTry."""
    import yaml

    rules = yaml.safe_load((SNIPPETS / RULES).read_text())
    for group in rules["groups"]:
        group["rules"] = [r for r in group["rules"] if r["alert"] != "TokenUserPinFinalTry"]
    (tmp_path / Path(RULES).name).write_text(yaml.safe_dump(rules), encoding="utf-8")
    (tmp_path / Path(RULE_TESTS).name).write_bytes((SNIPPETS / RULE_TESTS).read_bytes())
    said = promtool.rule_tests_problems(tmp_path / Path(RULE_TESTS).name)
    assert said, "promtool test rules passed without the final-try rule"
    assert "TokenUserPinFinalTry" in said[0]
    assert promtool.rule_tests_problems(SNIPPETS / RULE_TESTS) == []
