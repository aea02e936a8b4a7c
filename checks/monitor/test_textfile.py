"""The monitoring snippets: the textfile exporter run on a container host with a token, its file checked by
Prometheus's own promtool on the build machine; the alert rules are checked by the static checkers
promtool-rules and promtool-test-rules (zrunbook/checkers.toml, checks/test_static_checkers.py).

The token, version and certificate metrics run on amd64 only: nothing there depends on the architecture. Neither host
has an AP bus, so the adapter metrics are proven against a stand-in: a directory tree built in the container with
the sysfs attributes lszcrypt reads (s390-tools 2.43 zconf/zcrypt/lszcrypt.c) and the kernel's AP bus and zcrypt
drivers create (drivers/s390/crypto/ap_card.c, ap_queue.c, zcrypt_card.c, zcrypt_queue.c), handed to the exporter
with AP_SYSFS. libica's counters are the real icastats -S on the s390x host (libica-utils 3.9 under qemu, no
adapter: every RSA operation is libica's software fallback).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from checks.hosts import apache
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.steps import snippet_path, start_pkcsslotd
from checks.hosts.token import LABEL, PINS, slot_of
from checks.hosts.util import output
from zrunbook import ROOT, SNIPPETS, negatives
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


def rule_test(tmp_path: Path, samples_by_instance: dict[str, dict[str, float]], expected: list[dict],
              alertname: str, rules: str | None = None) -> list[str]:
    """promtool test rules on the rules (the snippet's, or the YAML text ``rules``) fed the exporter's own samples,
    each kept for 30 minutes under its instance label: the alerts named alertname at 20m must be ``expected``."""
    import yaml

    series = []
    for instance, samples in samples_by_instance.items():
        for key, value in samples.items():
            name, _, labels = key.partition("{")
            labels = f'instance="{instance}"' + ("," + labels.rstrip("}") if labels else "")
            series.append({"series": f"{name}{{{labels}}}", "values": f"{value:g}x30"})
    test = {"rule_files": [Path(RULES).name], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series,
                       "alert_rule_test": [{"eval_time": "20m", "alertname": alertname, "exp_alerts": expected}]}]}
    (tmp_path / Path(RULES).name).write_text(rules or (SNIPPETS / RULES).read_text(), encoding="utf-8")
    (tmp_path / "exported.test.yml").write_text(yaml.safe_dump(test), encoding="utf-8")
    return promtool.rule_tests_problems(tmp_path / "exported.test.yml")


# A stand-in AP bus: adapters and queues with the attributes the kernel gives them. card00 and its queue are well;
# card01 is checkstopped (its queue too; the kernel's online reads 0 then, and an uninitialised queue's
# request_count reads "-"); card02 is on a kernel without config and chkstop, and its queue 02.0005 was set offline.
FAKE_AP = "/tmp/zr-fake-ap"
FAKE_TREE = {
    "card00": {"type": "CEX8C", "online": "1", "config": "1", "chkstop": "0", "request_count": "42"},
    "card00/00.0011": {"online": "1", "config": "1", "chkstop": "0", "request_count": "40"},
    "card01": {"type": "CEX8P", "online": "0", "config": "1", "chkstop": "1", "request_count": "7"},
    "card01/01.0011": {"online": "0", "config": "1", "chkstop": "1", "request_count": "-"},
    "card02": {"type": "CEX5A", "online": "1", "request_count": "3"},
    "card02/02.0005": {"online": "0", "request_count": "0"},
}


def rules_without(drop) -> str:
    """The snippet's rules as YAML text without the rules for which drop(rule) is true."""
    import yaml

    rules = yaml.safe_load((SNIPPETS / RULES).read_text())
    for group in rules["groups"]:
        group["rules"] = [r for r in group["rules"] if not drop(r)]
    return yaml.safe_dump(rules)


def rule_tests_without(tmp_path: Path, drop) -> list[str]:
    """promtool test rules with the snippet's test file against the rules without those drop(rule) picks."""
    (tmp_path / Path(RULES).name).write_text(rules_without(drop), encoding="utf-8")
    (tmp_path / Path(RULE_TESTS).name).write_bytes((SNIPPETS / RULE_TESTS).read_bytes())
    return promtool.rule_tests_problems(tmp_path / Path(RULE_TESTS).name)


def adapter_alert(card: str, state: str, critical: bool = False, **labels: str) -> dict:
    """CryptoAdapterUnavailable as promtool must see it for host web9: its labels and its annotations."""
    where = f"{card} queue {labels['queue']}" if "queue" in labels else card
    summary = f"web9: crypto adapter {where} is unusable ({state})"
    if critical:
        summary += ", and a secure-key token needs it"
        description = ("A CCA or EP11 token cannot sign, unwrap or make keys without an adapter domain; there is no "
                       "software fallback.")
    else:
        description = "libica sends RSA to the remaining adapters, or computes it in software when none is left."
    return {"exp_labels": {"severity": "critical" if critical else "warning", "instance": "web9", "card": card,
                           "state": state, **labels},
            "exp_annotations": {"summary": summary, "description": description}}


def fake_ap_bus(host) -> None:
    commands = [f"rm -rf {FAKE_AP}"]
    for device, attributes in FAKE_TREE.items():
        folder = f"{FAKE_AP}/devices/{device}"
        commands.append(f"mkdir -p {folder}")
        commands += [f"echo {shlex.quote(v)} > {folder}/{k}" for k, v in attributes.items()]
    host.run_expect([0], " && ".join(commands))


def wrong_login(host) -> None:
    host.run(f"runuser -u www-data -- env PKCS11_USER_PIN={WRONG_PIN} p11sak list-key private --slot {slot_of(host)}")


def flags(host) -> str:
    return re.search(r"Flags: (0x[0-9A-F]+)", host.check_output(f"pkcsconf -t -c {slot_of(host)}")).group(1)


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
    start = fresh_host.check_output(
        f"date -u -d \"$(openssl x509 -noout -startdate -in {SITE_CERT} | cut -d= -f2)\" +%s")
    assert samples['zrunbook_certificate_not_before_timestamp_seconds{source="127.0.0.1:443"}'] == int(start)
    assert not [k for k in samples if k.startswith("zrunbook_ap_")], "adapter metrics on a host without an AP bus"
    assert "no AP bus here, so no adapter metrics (they need IBM Z)" in said


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


@pytest.mark.negative("monitor/zrunbook-textfile.sh",
                      expects="run as another user or into a directory it cannot write, the exporter stops (exit 2)")
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
    # nothing read from pkcsconf; the store count comes from find and stays
    assert not [k for k in hung if k.startswith(("zrunbook_token_user_", "zrunbook_opencryptoki_"))], hung
    assert hung["zrunbook_token_store_suspect_entries"] == 0
    refused = fresh_host.run(f"runuser -u www-data -- bash {snippet_path(EXPORTER)} {OUT}")
    assert refused.rc == 2, output(refused)
    assert "run as root" in refused.stderr, output(refused)
    refused = fresh_host.run(f"bash {snippet_path(EXPORTER)} /nonexistent")
    assert refused.rc == 2, output(refused)
    assert "/nonexistent is not a writable directory" in refused.stderr, output(refused)


# A pkcsconf ahead on PATH that writes who runs it (uid, gid, every group) to a log any user may write, then runs the
# real one: the exporter's token tools must never run as root (review 2026-12 H-1).
ID_SHIM = "/tmp/zr-ids"
STORE = "/var/lib/opencryptoki"


def id_shim(host) -> None:
    shim = '#!/bin/sh\necho "$(id -u) $(id -g) $(id -G)" >> /tmp/zr-ids/log\nexec /usr/sbin/pkcsconf "$@"\n'
    host.run_expect([0], f"mkdir -p {ID_SHIM} && chmod 777 {ID_SHIM} && rm -f {ID_SHIM}/log"
                         f" && printf %s {shlex.quote(shim)} > {ID_SHIM}/pkcsconf && chmod 755 {ID_SHIM}/pkcsconf")


def seen_ids(host) -> list[str]:
    return host.check_output(f"cat {ID_SHIM}/log 2>/dev/null || true").splitlines()


@pytest.mark.uses("monitor/zrunbook-alerts.yml")
@pytest.mark.negative("monitor/zrunbook-textfile.sh",
                      expects="the exporter's old form, pkcsconf run as root, is seen loading openCryptoki as uid 0")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(EXPORTER, checker="promtool-metrics")
def test_the_exporter_loads_opencryptoki_only_as_zrprobe_and_counts_what_was_planted_in_the_store(
        fresh_host, tmp_path):
    """Review 2026-12 H-1: every pkcsconf the exporter runs (-t and -i) runs as zrprobe (group pkcs11) and no other
    group, and still reads the token's flags and the library's version. A symbolic link and a FIFO planted in the
    token store are counted (2) and fire TokenStoreTampered, critical. The negative: the exporter with its setpriv
    prefix taken out (its form before the fix) is seen running pkcsconf as uid 0."""
    start_pkcsslotd(fresh_host)
    id_shim(fresh_host)
    probe = fresh_host.check_output("id -u zrprobe")
    pkcs11 = fresh_host.check_output("getent group pkcs11 | cut -d: -f3")
    env = f"PATH={ID_SHIM}:$PATH CERT_FILE={SITE_CERT}"
    samples, said = export(fresh_host, tmp_path, env, "unprivileged.prom")
    assert seen_ids(fresh_host) == [f"{probe} {pkcs11} {pkcs11}"] * 2, seen_ids(fresh_host)
    assert samples["zrunbook_slotd_up"] == 1, said
    assert samples[f'zrunbook_token_user_pin_final_try{{token="{LABEL}"}}'] == 0, samples
    assert [k for k in samples if k.startswith("zrunbook_opencryptoki_info")], samples
    assert samples["zrunbook_token_store_suspect_entries"] == 0, said
    assert "token store: 0 suspect entries" in said

    fresh_host.run_expect([0], f"ln -s /etc/shadow {STORE}/planted-link && mkfifo {STORE}/planted-fifo")
    try:
        planted, said = export(fresh_host, tmp_path, env, "planted.prom")
        assert fresh_host.check_output("stat -c '%U:%G %a' /etc/shadow") in ("root:shadow 640", "root:shadow 600")
    finally:
        fresh_host.run(f"rm -f {STORE}/planted-link {STORE}/planted-fifo")
    assert planted["zrunbook_token_store_suspect_entries"] == 2, said
    assert "token store: 2 suspect entries (list them: find" in said
    description = ("A link or FIFO in /var/lib/opencryptoki was planted by hand or by a pkcs11 member. Do not start, "
                   "restart or reload httpd or run token tools as root until it is found and removed (find "
                   "/var/lib/opencryptoki -type l -o ! -type f ! -type d -o -type f -links +1); ask who put it there.")
    expected = [{"exp_labels": {"severity": "critical", "instance": "web8"},
                 "exp_annotations": {
                     "summary": "web8: 2 entries in the openCryptoki token store that openCryptoki never writes",
                     "description": description}}]
    assert rule_test(tmp_path, {"web8": planted}, expected, "TokenStoreTampered") == []

    # The negative: the same exporter without its setpriv prefix, as it was before the fix, runs pkcsconf as root.
    unprivileged = '"${as_group[@]}" '
    assert (SNIPPETS / EXPORTER).read_text().count(unprivileged) == 2
    pattern = r'"[$]{as_group\[@\]}" '  # the same text as a sed pattern
    fresh_host.run_expect([0], f"rm -f {ID_SHIM}/log && sed 's/{pattern}//' "
                               f"{snippet_path(EXPORTER)} > /tmp/zr-old-textfile.sh")
    old = fresh_host.run(f"{env} bash /tmp/zr-old-textfile.sh {OUT}")
    assert old.rc == 0, output(old)
    as_root = seen_ids(fresh_host)
    assert as_root, "the old form ran no pkcsconf"
    assert all(line.startswith("0 0 ") for line in as_root), as_root


@pytest.mark.parametrize("bad", sorted(p.name for p in (ROOT / "checks/monitor/bad").glob("*.prom")))
def test_promtool_rejects_malformed_metric_files(bad):
    """What promtool must say about each file is its declaration (checks/negatives.toml)."""
    expected = negatives.declaration(f"monitor/bad/{bad}").expects[0].rejects
    found = promtool.metrics_problems(ROOT / "checks/monitor/bad" / bad)
    assert [p for p in found if expected in p], found


@pytest.mark.negative(invariant="a missing checker program is a failure that says what to install",
                      expects="the rules check fails with one problem: install Debian's prometheus package")
def test_a_missing_promtool_is_a_failure_that_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    said = promtool.rules_problems(SNIPPETS / RULES)
    assert said == [promtool.INSTALL]
    assert "install Debian's prometheus package" in said[0]


@pytest.mark.uses("monitor/zrunbook-alerts.test.yml", "monitor/zrunbook-alerts.yml")
def test_the_healthy_rule_test_names_every_alert_so_a_new_rule_cannot_fire_unseen():
    """promtool test rules checks only the alerts a test names: the healthy case must name them all."""
    import yaml

    alerts = {r["alert"] for g in yaml.safe_load((SNIPPETS / RULES).read_text())["groups"] for r in g["rules"]
              if "alert" in r}
    healthy = yaml.safe_load((SNIPPETS / RULE_TESTS).read_text())["tests"][0]["alert_rule_test"]
    assert {t["alertname"] for t in healthy if t["exp_alerts"] == []} == alerts
    assert "TokenUserPinFinalTry" in {t["alertname"] for t in
                                      yaml.safe_load((SNIPPETS / RULE_TESTS).read_text())["tests"][1]["alert_rule_test"]
                                      if t["exp_alerts"]}


@pytest.mark.uses("monitor/zrunbook-alerts.yml")
@pytest.mark.negative("monitor/zrunbook-alerts.test.yml",
                      expects="promtool test rules fails when a final try would not alert")
@pytest.mark.snippet(RULE_TESTS, checker="promtool-test-rules")
def test_the_rule_tests_fail_when_a_final_try_would_not_alert(tmp_path):
    """The page's outcome check against rules that miss its purpose: the final-try rule dropped from a copy of the
    rules, promtool test rules with the snippet's test file must fail, naming TokenUserPinFinalTry."""
    said = rule_tests_without(tmp_path, lambda r: r.get("alert") == "TokenUserPinFinalTry")
    assert said, "promtool test rules passed without the final-try rule"
    assert "TokenUserPinFinalTry" in said[0]
    assert promtool.rule_tests_problems(SNIPPETS / RULE_TESTS) == []


@pytest.mark.negative("monitor/zrunbook-alerts.test.yml",
                      expects="promtool test rules fails without the adapter, libica, tamper or patch-level rule, "
                              "naming the alert")
@pytest.mark.uses("monitor/zrunbook-alerts.yml")
@pytest.mark.parametrize(("alert", "severity"), [("CryptoAdapterUnavailable", "critical"),
                                                 ("CryptoAdapterUnavailable", "warning"),
                                                 ("LibicaRsaInSoftware", "warning"),
                                                 ("TokenStoreTampered", "critical"),
                                                 ("CryptoPatchLevelUnknown", "warning"),
                                                 ("CertificateRenewalNotRunning", "warning")])
@pytest.mark.snippet(RULE_TESTS, checker="promtool-test-rules")
def test_the_rule_tests_fail_when_an_adapter_or_software_rsa_alert_is_lost(tmp_path, alert, severity):
    """The adapter rules against rules that miss their purpose: without the critical rule a checkstopped adapter
    on a host with a secure-key token pages nobody; without the warning one an offline queue goes unseen; without
    the libica rule RSA in software does; without the tamper rule a link planted in the token store does (review
    2026-12 H-1), without the patch-level rule an unconfirmed fix, and without the renewal's staleness rule a
    renewal that stopped running (review of the renewal, M6). promtool test rules with the snippet's test
    file must fail, naming it."""
    said = rule_tests_without(tmp_path, lambda r: r.get("alert") == alert and r["labels"]["severity"] == severity)
    assert said, f"promtool test rules passed without the {severity} {alert} rule"
    assert alert in said[0]


@pytest.mark.uses("monitor/zrunbook-alerts.yml")
@pytest.mark.only_hosts("debian13-amd64", why="it checks the answer where there is no icastats (no libica)")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(EXPORTER, checker="promtool-metrics")
def test_adapter_and_queue_states_are_exported_from_a_stand_in_ap_bus_and_fire_the_adapter_alert(fresh_host, tmp_path):
    """A stand-in, not IBM Z: the AP bus is a directory tree with the attributes the kernel gives (FAKE_TREE), read
    through AP_SYSFS. Per adapter and per queue: online, config, chkstop and requests; no config or chkstop sample
    where the kernel has none (card02), no request sample where the queue says "-". The exporter's own file then
    drives the snippet's rules in promtool: the checkstopped adapter (card01, once, not again as offline nor for its
    queue) and the offline queue alert as warnings on this host, whose token is the Soft one; with a pkcsconf that
    shows the token's model as CCA (a stand-in for a CCA token) the same states are critical."""
    start_pkcsslotd(fresh_host)
    fake_ap_bus(fresh_host)
    samples, said = export(fresh_host, tmp_path, f"AP_SYSFS={FAKE_AP} CERT_FILE={SITE_CERT}", "fake-ap.prom")
    ap = {k: v for k, v in samples.items() if k.startswith("zrunbook_ap_")}
    assert ap == {
        'zrunbook_ap_card_online{card="card00",type="CEX8C"}': 1,
        'zrunbook_ap_card_online{card="card01",type="CEX8P"}': 0,
        'zrunbook_ap_card_online{card="card02",type="CEX5A"}': 1,
        'zrunbook_ap_card_config{card="card00",type="CEX8C"}': 1,
        'zrunbook_ap_card_config{card="card01",type="CEX8P"}': 1,
        'zrunbook_ap_card_chkstop{card="card00",type="CEX8C"}': 0,
        'zrunbook_ap_card_chkstop{card="card01",type="CEX8P"}': 1,
        'zrunbook_ap_card_requests_total{card="card00"}': 42,
        'zrunbook_ap_card_requests_total{card="card01"}': 7,
        'zrunbook_ap_card_requests_total{card="card02"}': 3,
        'zrunbook_ap_queue_online{card="card00",queue="00.0011"}': 1,
        'zrunbook_ap_queue_online{card="card01",queue="01.0011"}': 0,
        'zrunbook_ap_queue_online{card="card02",queue="02.0005"}': 0,
        'zrunbook_ap_queue_config{card="card00",queue="00.0011"}': 1,
        'zrunbook_ap_queue_config{card="card01",queue="01.0011"}': 1,
        'zrunbook_ap_queue_chkstop{card="card00",queue="00.0011"}': 0,
        'zrunbook_ap_queue_chkstop{card="card01",queue="01.0011"}': 1,
        'zrunbook_ap_queue_requests_total{card="card00",queue="00.0011"}': 40,
        'zrunbook_ap_queue_requests_total{card="card02",queue="02.0005"}': 0,
    }, ap
    assert "3 adapter(s), 3 queue(s)" in said
    assert samples["zrunbook_secure_key_tokens"] == 0  # the Soft token
    assert "no icastats here, so no libica metrics" in said  # amd64: no libica
    warning = [adapter_alert("card01", "chkstop", type="CEX8P"),
               adapter_alert("card02", "offline", queue="02.0005")]
    assert rule_test(tmp_path, {"web9": samples}, warning, "CryptoAdapterUnavailable") == []

    # The token's model as a CCA token shows it (a stand-in: no CCA token runs off IBM Z): one secure-key token, and
    # the same two states page as critical.
    wrapper = '#!/bin/sh\n/usr/sbin/pkcsconf "$@" | sed "s/Model: Soft/Model: CCA/"\n'
    fresh_host.run_expect([0], f"mkdir -p /tmp/zr-cca && printf %s {shlex.quote(wrapper)} > /tmp/zr-cca/pkcsconf"
                               " && chmod 755 /tmp/zr-cca/pkcsconf")
    cca, _ = export(fresh_host, tmp_path, f"PATH=/tmp/zr-cca:$PATH AP_SYSFS={FAKE_AP} CERT_FILE={SITE_CERT}",
                    "cca.prom")
    assert cca["zrunbook_secure_key_tokens"] == 1, cca
    critical = [adapter_alert("card01", "chkstop", critical=True, type="CEX8P"),
                adapter_alert("card02", "offline", critical=True, queue="02.0005")]
    assert rule_test(tmp_path, {"web9": cca}, critical, "CryptoAdapterUnavailable") == []
    # the negative: the same file against the rules without the critical one
    weaker = rules_without(lambda r: r.get("alert") == "CryptoAdapterUnavailable"
                           and r["labels"]["severity"] == "critical")
    assert rule_test(tmp_path, {"web9": cca}, critical, "CryptoAdapterUnavailable", weaker)


@pytest.mark.uses("monitor/zrunbook-alerts.yml")
@pytest.mark.only_hosts("debian13-s390x")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.snippet(EXPORTER, checker="promtool-metrics")
def test_libica_rsa_in_software_grows_the_software_counter_and_fires_its_alert(fresh_host, tmp_path):
    """The real icastats -S on the s390x host (qemu: no adapter, so libica computes RSA itself). Two signatures with
    the token's RSA key through the ICA token (SHA-512: qemu emulates CPACF's SHA-512 only, so the
    ICA token cannot hash with SHA-256 there) grow the software counter, never the hardware one; the exporter's
    files before and after, fed to the snippet's rules, fire LibicaRsaInSoftware. No AP bus here: no adapter
    metric."""
    start_pkcsslotd(fresh_host)
    cert = f"CERT_FILE={SITE_CERT}"
    before, said = export(fresh_host, tmp_path, cert, "libica-before.prom")
    assert not [k for k in before if k.startswith("zrunbook_ap_")], before
    assert "libica: RSA counters read" in said
    assert before["zrunbook_secure_key_tokens"] == 0  # the ICA token is no secure-key token
    module = fresh_host.check_output("ls /usr/lib/*/opencryptoki/libopencryptoki.so.0").split()[0]
    fresh_host.run_expect([0], "echo 'monitoring: libica signs' > /tmp/message")
    for _ in range(2):
        signed = fresh_host.run(f"pkcs11-tool --module {module} --slot {slot_of(fresh_host)} --login "
                                f"--pin {PINS['TOKEN_USER_PIN']} --sign -m SHA512-RSA-PKCS --label apachekey "
                                "-i /tmp/message -o /tmp/signature")
        assert signed.rc == 0, output(signed)
    after, _ = export(fresh_host, tmp_path, cert, "libica-after.prom")

    def count(samples, where):
        return sum(v for k, v in samples.items()
                   if k.startswith("zrunbook_libica_rsa_operations_total") and f'where="{where}"' in k)

    assert {k.split("{")[1] for k in after if k.startswith("zrunbook_libica_")} == {
        f'function="{f}",where="{w}"}}' for f in ("RSA-ME", "RSA-CRT") for w in ("hardware", "software")}
    assert count(after, "software") - count(before, "software") >= 2, (before, after)
    assert count(after, "hardware") == count(before, "hardware") == 0
    # the two files as two scrapes: flat at the first file's counts, then the second's
    expected = [{"exp_labels": {"severity": "warning", "instance": "z1"},
                 "exp_annotations": {"summary": "z1: libica computed RSA in software in the last 15 minutes",
                                     "description": "No Crypto Express adapter answered these RSA requests; look at "
                                                    "lszcrypt and the adapter alerts."}}]
    import yaml

    series = [{"series": k.replace("{", '{instance="z1",', 1), "values": f"{before[k]:g}x10 {after[k]:g}x20"}
              for k in after if k.startswith("zrunbook_libica_")]
    test = {"rule_files": [Path(RULES).name], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": [
                {"eval_time": "15m", "alertname": "LibicaRsaInSoftware", "exp_alerts": expected},
                {"eval_time": "5m", "alertname": "LibicaRsaInSoftware", "exp_alerts": []}]}]}
    (tmp_path / Path(RULES).name).write_bytes((SNIPPETS / RULES).read_bytes())
    (tmp_path / "libica.test.yml").write_text(yaml.safe_dump(test), encoding="utf-8")
    assert promtool.rule_tests_problems(tmp_path / "libica.test.yml") == []
