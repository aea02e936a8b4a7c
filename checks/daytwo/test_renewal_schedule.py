"""One renewal schedule for the renewal step and the monitoring page's alerts (zrunbook/daytwo/renewal.py).

The renewal step renews at two thirds of the served certificate's lifetime, CertificateExpiresSoon fires at three
quarters, CertificateRenewalFailing after a failed run stays failed for an hour. The snippets carry the numbers
literally (a shell script and a rules file cannot import Python); these checks hold them to the module: the
lifetimes table's renewal day, the script's arithmetic and the rule's expression, and promtool on rules fed a
certificate of every lifetime in the table at the renewal point, just before the alert point and just after it.
A fixed threshold of 30 days (the rule before this schedule) fails the same promtool test: it fires on a 47-day
certificate before its renewal is due. The script's decision itself runs on the amd64 host
(checks/daytwo/test_acme_renewal.py, certificates of different ages).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from zrunbook import SNIPPETS
from zrunbook.daytwo import renewal as r
from zrunbook.monitor import promtool

RENEW = "daytwo/acme/renew-token-certificate-acme.sh"
RULES = "monitor/zrunbook-alerts.yml"
RULE_TESTS = "monitor/zrunbook-alerts.test.yml"
EVAL = 120  # seconds: each certificate's age is set so that it has it at this evaluation time


def rule_tests_without(tmp_path: Path, drop) -> list[str]:
    """promtool test rules with the snippet's test file against a copy of the rules without those drop(rule) picks."""
    rules = yaml.safe_load((SNIPPETS / RULES).read_text())
    for group in rules["groups"]:
        group["rules"] = [x for x in group["rules"] if not drop(x)]
    (tmp_path / Path(RULES).name).write_text(yaml.safe_dump(rules), encoding="utf-8")
    (tmp_path / Path(RULE_TESTS).name).write_bytes((SNIPPETS / RULE_TESTS).read_bytes())
    return promtool.rule_tests_problems(tmp_path / Path(RULE_TESTS).name)


def rule(name: str) -> dict:
    rules = yaml.safe_load((SNIPPETS / RULES).read_text())
    return next(x for g in rules["groups"] for x in g["rules"] if x.get("alert") == name)


def test_the_lifetimes_table_renews_each_lifetime_at_the_schedule_s_two_thirds():
    rows = r.lifetimes()
    assert rows, "facts/daytwo/certificate-lifetimes.csv has no rows"
    for row in rows:
        lifetime = int(row[r.LIFETIME_COLUMN])
        assert int(row[r.RENEWAL_COLUMN]) == r.renewal_seconds(lifetime) // r.DAY, row
    assert f"renewal at {r.words(r.RENEW_AT)} of it (day)" == r.RENEWAL_COLUMN


@pytest.mark.uses("daytwo/acme/renew-token-certificate-acme.sh", "monitor/zrunbook-alerts.yml",
                  "monitor/check-certificate-expiry.sh")
def test_the_script_and_the_rules_carry_the_schedule_s_fractions():
    script = (SNIPPETS / RENEW).read_text()
    assert re.findall(r"\(end - start\) \* (\d+) / (\d+)", script) == [
        (str(r.RENEW_AT.numerator), str(r.RENEW_AT.denominator))], "the script's due point is not RENEW_AT"
    expiry = " ".join(rule("CertificateExpiresSoon")["expr"].split())
    found = re.search(r"< \(1 - (\d+)/(\d+)\) \* \(zrunbook_certificate_not_after_timestamp_seconds - "
                      r"zrunbook_certificate_not_before_timestamp_seconds\)", expiry)
    assert found, expiry
    assert Fraction(int(found[1]), int(found[2])) == r.EXPIRY_ALERT_AT
    assert r.RENEW_AT < r.EXPIRY_ALERT_AT < 1
    # verify's expiry check judges the served certificate at the alert's point
    check = (SNIPPETS / "monitor/check-certificate-expiry.sh").read_text()
    assert re.findall(r"\(finish - start\) \* (\d+) / (\d+)", check) == [
        (str(r.EXPIRY_ALERT_AT.numerator), str(r.EXPIRY_ALERT_AT.denominator))], \
        "the expiry check is not EXPIRY_ALERT_AT"
    assert rule("CertificateRenewalFailing")["for"] == r.FAILING_FOR


def humanize(seconds: int) -> str:
    """Prometheus's humanizeDuration for whole seconds of a day or more."""
    d, rest = divmod(seconds, r.DAY)
    return f"{d}d {rest // 3600}h {rest % 3600 // 60}m {rest % 60}s"


def schedule_test(tmp_path: Path, rules_text: str) -> list[str]:
    """promtool test rules on rules_text, fed one certificate per lifetime and age: at the renewal point, an hour
    before the alert point and an hour after it. Only the last may fire CertificateExpiresSoon."""
    series, expected = [], []
    for row in r.lifetimes():
        lifetime = int(row[r.LIFETIME_COLUMN])
        ages = {"due": r.renewal_seconds(lifetime), "before": int(r.alert_seconds(lifetime)) - 3600,
                "after": int(r.alert_seconds(lifetime)) + 3600}
        for case, age in ages.items():
            instance = f"{case}-{lifetime}d"
            begin = EVAL - age
            end = begin + lifetime * r.DAY
            labels = f'instance="{instance}",source="127.0.0.1:443"'
            series += [{"series": f"zrunbook_certificate_not_before_timestamp_seconds{{{labels}}}",
                        "values": f"{begin}x5"},
                       {"series": f"zrunbook_certificate_not_after_timestamp_seconds{{{labels}}}",
                        "values": f"{end}x5"}]
            if case == "after":
                expected.append({"exp_labels": {"severity": "warning", "instance": instance,
                                                "source": "127.0.0.1:443"},
                                 "exp_annotations": {"summary": f"{instance}: the certificate at 127.0.0.1:443 "
                                                                f"expires in {humanize(end - EVAL)}"}})
    test = {"rule_files": ["rules.yml"], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series,
                       "alert_rule_test": [{"eval_time": f"{EVAL // 60}m", "alertname": "CertificateExpiresSoon",
                                            "exp_alerts": expected}]}]}
    (tmp_path / "rules.yml").write_text(rules_text, encoding="utf-8")
    (tmp_path / "schedule.test.yml").write_text(yaml.safe_dump(test), encoding="utf-8")
    return promtool.rule_tests_problems(tmp_path / "schedule.test.yml")


@pytest.mark.negative("monitor/zrunbook-alerts.yml",
                      expects="the expiry rule with a fixed 30 days fails the rule tests for a 47-day certificate")
@pytest.mark.snippet(RULES, checker="promtool-rules")
def test_the_expiry_alert_fires_after_the_renewal_window_for_every_lifetime_and_a_fixed_30_days_does_not(tmp_path):
    assert schedule_test(tmp_path, (SNIPPETS / RULES).read_text()) == []
    # the negative: the rule as it was, 30 days before the end whatever the lifetime
    old = yaml.safe_load((SNIPPETS / RULES).read_text())
    for group in old["groups"]:
        for x in group["rules"]:
            if x.get("alert") == "CertificateExpiresSoon":
                x["expr"] = "zrunbook_certificate_not_after_timestamp_seconds - time() < 30 * 86400"
    said = schedule_test(tmp_path, yaml.safe_dump(old))
    assert said, "a fixed 30-day threshold passed the schedule's test"
    # it fires while the 47-day certificate's renewal is not late
    assert "due-47d" in said[0], said
    assert "before-47d" in said[0], said


@pytest.mark.negative("monitor/zrunbook-alerts.test.yml",
                      expects="promtool test rules fails without the renewal or expiry alert, naming it")
@pytest.mark.uses("monitor/zrunbook-alerts.yml")
@pytest.mark.parametrize("alert", ["CertificateRenewalFailing", "CertificateExpiresSoon"])
@pytest.mark.snippet(RULE_TESTS, checker="promtool-test-rules")
def test_the_rule_tests_fail_when_a_renewal_or_expiry_alert_is_lost(tmp_path, alert):
    said = rule_tests_without(tmp_path, lambda x: x.get("alert") == alert)
    assert said, f"promtool test rules passed without {alert}"
    assert alert in said[0]
