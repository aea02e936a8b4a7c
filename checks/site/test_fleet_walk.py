"""The monitoring page (docs/how-to/operate-the-fleet.md) walked as its reader walks it, from the built site.

The reader, root on the Apache token site of the IHS chapter (the TOKEN_KEY state, on a host booted with systemd, so
that httpd and pkcsslotd are systemd's units as on a server), has node_exporter's textfile directory as Debian's
``prometheus-node-exporter`` package makes it (``/var/lib/prometheus`` the ``prometheus`` user's,
``node-exporter`` under it root's, 0755; the package's postinst and file list, 1.5.0). Root downloads the snippet
bundle, its ``.sha256``, the renewal page's install step, the exporter's units and cron file, the alert rules and the
certificate check from the site this run built (served on localhost, copied into the container, which has no
network), installs the bundle with that step, the units from the installed bundle where the page says, writes the
environment file, and enables the timer. The service is started through systemd, as the timer starts it.

The page's purpose, checked: node_exporter's directory holds ``zrunbook.prom``, root's and 0644, which Prometheus's
``promtool check metrics`` accepts, with the slot daemon up, the token's flags clean, the patch level judged by the
installed bundle's own fixed-versions rows and the served certificate's dates; the page's alert rules fed that file
(``promtool test rules``, its time stamps moved so that the rules' ``time()`` is the moment of the run) fire nothing.
The page's certificate check passes on the served certificate. The cron file, run in cron's environment
(checks/hosts/cron.py) with the timer stopped, writes the file again; with cron's own PATH it logs why it cannot.
Then wrong states: one wrong user PIN counted fires ``TokenUserPinCountLow`` from the file the service writes, and
a certificate past three quarters of its lifetime fails the certificate check and fires ``CertificateExpiresSoon``.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from checks.hosts import bundle, cron, reader
from checks.hosts.acme import age_served_certificate
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.pin_state import COUNT_LOW, FAILED, WRONG, flags
from checks.hosts.token import LABEL, slot_of
from checks.hosts.util import ok, output
from zrunbook.monitor import promtool

INSTALL = "daytwo/install-snippet-bundle.sh"
EXPORTER = "monitor/zrunbook-textfile.sh"
SERVICE, TIMER, CRON = (f"monitor/zrunbook-textfile{k}" for k in (".service", ".timer", ".cron"))
RULES = "monitor/zrunbook-alerts.yml"
EXPIRY = "monitor/check-certificate-expiry.sh"
UNIT = "zrunbook-textfile.service"
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"  # Debian's prometheus-node-exporter: --collector.textfile.directory
PROM = f"{TEXTFILE_DIR}/zrunbook.prom"
ENV_FILE = "/etc/zrunbook/zrunbook-textfile.env"
CRON_D = "/etc/cron.d/zrunbook-textfile"
SOURCE = "127.0.0.1:443"
INSTANCE = "web1"
EVAL_S = 20 * 60  # promtool evaluates the alerts at 20m: its time() is then 1200

pytestmark = [pytest.mark.xdist_group("fleet-walk"),
              pytest.mark.only_hosts("debian13-amd64",
                                     why="the booted token host of the site walks is the amd64 one "
                                         "(checks/site/conftest.py); neither host has an AP bus, the only part of "
                                         "the exporter that differs on IBM Z")]


def node_exporter_directory(host) -> None:
    """The textfile directory as prometheus-node-exporter 1.5.0 leaves it: its postinst adds the system user
    prometheus (home /var/lib/prometheus, not made) and gives it /var/lib/prometheus; the package ships
    /var/lib/prometheus/node-exporter as root's, 0755."""
    ok(host, "getent passwd prometheus >/dev/null || useradd --system --home-dir /var/lib/prometheus"
             " --no-create-home --user-group --shell /usr/sbin/nologin prometheus")
    ok(host, f"install -d -m 0755 -o prometheus -g prometheus /var/lib/prometheus"
             f" && install -d -m 0755 -o root -g root {TEXTFILE_DIR}")


def exported(host, tmp_path: Path, name: str) -> tuple[dict[str, float], int]:
    """The file node_exporter would read, copied out and checked by promtool; (its samples, the host's time)."""
    assert ok(host, f"stat -c '%a %U' {PROM}").strip() == "644 root"
    text = ok(host, f"cat {PROM}")
    now = int(ok(host, "date +%s"))
    copy = tmp_path / name
    copy.write_text(text, encoding="utf-8")
    assert promtool.metrics_problems(copy) == []
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            samples[key] = float(value)
    return samples, now


def run_service(host) -> str:
    """The service started by systemd, as its timer starts it; what this run wrote to the journal, once its last line
    (the exporter's ``wrote`` line, or its one-sentence reason) is there: journald reads the stream on its own. The
    run is told from earlier ones by the journal's cursor before it (with its timer stopped, systemd unloads the
    service once it ends, and its invocation id with it)."""
    cursor = ok(host, "journalctl -n 1 --show-cursor --no-pager -o cat | sed -n 's/^-- cursor: //p'").strip()
    assert cursor, "the journal gave no cursor"
    started = host.run(f"systemctl start {UNIT}")
    show = f"journalctl -u {UNIT} --after-cursor={shlex.quote(cursor)} --no-pager -o cat"
    wait = f"until {show} | grep -qE '^(wrote |zrunbook-textfile: )'; do sleep 0.05; done"
    ok(host, f"timeout 30 bash -c {shlex.quote(wait)} || {{ {show}; exit 1; }}")
    journal = ok(host, show)
    assert started.rc == 0, output(started) + journal
    return journal


def number(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def humanize_duration(seconds: int) -> str:
    """Prometheus's humanizeDuration for a whole number of seconds of a day or more (template.go)."""
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    assert days, "a duration under a day is printed otherwise"
    return f"{days}d {hours}h {minutes}m {secs}s"


def alert_problems(tmp_path: Path, rules: Path, samples: dict[str, float], now: int,
                   expected: dict[str, list[dict]]) -> list[str]:
    """promtool test rules: the page's rules fed the exporter's samples for 30 minutes, each time stamp moved so that
    the rules' time() at 20m is ``now``; every alert of the rules must fire as ``expected`` says (none by default)."""
    series = []
    for key, value in samples.items():
        name, _, labels = key.partition("{")
        if name.endswith("_timestamp_seconds"):
            value = value - now + EVAL_S
        labels = f'instance="{INSTANCE}"' + ("," + labels.rstrip("}") if labels else "")
        series.append({"series": f"{name}{{{labels}}}", "values": f"{number(value)}x30"})
    alerts = sorted({r["alert"] for g in yaml.safe_load(rules.read_text())["groups"] for r in g["rules"]
                     if "alert" in r})
    assert set(expected) <= set(alerts)
    test = {"rule_files": [rules.name], "evaluation_interval": "1m",
            "tests": [{"interval": "1m", "input_series": series,
                       "alert_rule_test": [{"eval_time": "20m", "alertname": a, "exp_alerts": expected.get(a, [])}
                                           for a in alerts]}]}
    folder = tmp_path / f"rules-{len(list(tmp_path.glob('rules-*')))}"
    folder.mkdir()
    (folder / rules.name).write_bytes(rules.read_bytes())
    (folder / "walk.test.yml").write_text(yaml.safe_dump(test), encoding="utf-8")
    return promtool.rule_tests_problems(folder / "walk.test.yml")


@pytest.mark.reader_walk("how-to/operate-the-fleet")
@pytest.mark.negative("monitor/zrunbook-textfile.cron", "monitor/check-certificate-expiry.sh",
                      "monitor/zrunbook-alerts.yml",
                      expects="with cron's own PATH the line logs that pkcsconf is missing; a certificate 36 days "
                              "into 47 fails the certificate check; one wrong PIN counted fires TokenUserPinCountLow "
                              "and that certificate CertificateExpiresSoon, from the file the service writes")
@pytest.mark.uses("monitor/zrunbook-alerts.yml", "crypto/verify/check-fixed-versions.sh")
@pytest.mark.snippet(INSTALL, EXPORTER, SERVICE, TIMER, CRON, EXPIRY, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_fleet_page_from_the_site_s_downloads_exports_under_its_timer_and_alerts_only_on_a_wrong_state(
        site, base_url, booted_host, tmp_path):
    host = booted_host
    ca = reader.serve_under_systemd(host)
    node_exporter_directory(host)  # "Install node_exporter first": the directory as its Debian package makes it

    # the page's downloads: the bundle and its .sha256 from downloads/, each step from its download link
    files = [reader.download(base_url, f"downloads/{name}", tmp_path)
             for name in ("zrunbook-snippets.tar.gz", "zrunbook-snippets.tar.gz.sha256")]
    files += reader.snippets(base_url, tmp_path, INSTALL, SERVICE, TIMER, CRON, EXPIRY, RULES)
    reader.keep(host, "root", *files)
    said = ok(host, f"cd {bundle.DL} && bash {Path(INSTALL).name}")
    print(f"\n{said}")
    assert said.startswith("installed the snippet bundle"), said
    for unit in (SERVICE, TIMER, CRON):  # what the page shows is what the installed bundle holds
        ok(host, f"cmp {bundle.DL}/{Path(unit).name} {bundle.installed(unit)}")

    # 1. "Run it every 2 minutes": the units from the installed bundle, the environment file, the timer enabled
    ok(host, f"cp {bundle.installed(SERVICE)} {bundle.installed(TIMER)} /etc/systemd/system/"
             " && systemctl daemon-reload && systemctl enable --now zrunbook-textfile.timer")
    ok(host, f"install -d -m 0755 /etc/zrunbook && printf '%s\\n' CERT_CONNECT={SOURCE}"
             f" CERT_SERVERNAME=www.example.com > {ENV_FILE} && chmod 0644 {ENV_FILE}")
    now = int(ok(host, "date +%s"))
    due = int(ok(host, "date -d \"$(systemctl show -P NextElapseUSecRealtime zrunbook-textfile.timer)\" +%s"))
    assert 0 < due - now <= 2 * 60 + 15, f"the timer's next start is {due - now} s away"
    journal = run_service(host)
    print(journal)
    assert f"wrote {PROM}: slot daemon answering; token store: 0 suspect entries; patch level: every advisory" \
           " fixed" in journal, journal

    samples, now = exported(host, tmp_path, "healthy.prom")
    assert samples["zrunbook_slotd_up"] == 1, samples
    for flag in ("count_low", "final_try", "locked"):
        assert samples[f'zrunbook_token_user_pin_{flag}{{token="{LABEL}"}}'] == 0, samples
    assert samples["zrunbook_fixed_versions_status"] == 0, "the installed bundle's fixed-versions rows were not used"
    assert samples["zrunbook_token_store_suspect_entries"] == 0
    served = "openssl s_client -connect 127.0.0.1:443 -servername www.example.com </dev/null 2>/dev/null"
    for end, field in (("not_after", "enddate"), ("not_before", "startdate")):
        when = int(ok(host, f"date -u -d \"$({served} | openssl x509 -noout -{field} | cut -d= -f2)\" +%s"))
        assert samples[f'zrunbook_certificate_{end}_timestamp_seconds{{source="{SOURCE}"}}'] == when
    assert samples[f'zrunbook_certificate_read{{source="{SOURCE}"}}'] == 1
    assert 0 <= now - samples["zrunbook_textfile_timestamp_seconds"] < 60
    rules = tmp_path / Path(RULES).name  # the page's rules, from their download link
    assert alert_problems(tmp_path, rules, samples, now, {}) == []

    # "Check the certificate a site serves": the page's check, with the site's CA
    checked = reader.as_root(host, f"CA_FILE={ca} bash check-certificate-expiry.sh {SOURCE} www.example.com")
    assert checked.rc == 0, output(checked)

    # "On a host without systemd": the cron file from the installed bundle, its line as cron runs it
    ok(host, "systemctl disable --now zrunbook-textfile.timer && systemctl stop zrunbook-textfile.service"
             f" && rm {PROM}")
    ok(host, f"install -m 0644 {bundle.installed(CRON)} {CRON_D}")
    line = ok(host, f"cat {CRON_D}")
    ran = cron.run_line(host, line)
    assert ran.rc == 0, output(ran)
    assert ran.stdout == "", "a good run wrote to cron's mail"
    by_cron, _ = exported(host, tmp_path, "cron.prom")
    assert by_cron["zrunbook_slotd_up"] == 1
    assert by_cron[f'zrunbook_certificate_read{{source="{SOURCE}"}}'] == 1
    # with cron's own PATH the exporter stops at the missing pkcsconf, and syslog says so
    ran = cron.run_line(host, line, PATH="/usr/bin:/bin")
    assert ran.rc == 0, output(ran)  # logger's status: cron sees nothing
    cron.logged(host, "zrunbook-textfile: pkcsconf is missing: install opencryptoki.")

    # a wrong state: one wrong user PIN (typed in, never on a command line), then the service as its timer starts it
    wrong = reader.as_root(host, f"runuser -u www-data -- p11sak list-key private --slot {slot_of(host)}",
                           PKCS11_USER_PIN=WRONG)
    assert flags(host) & FAILED == COUNT_LOW, output(wrong)
    run_service(host)
    counted, now = exported(host, tmp_path, "count-low.prom")
    assert counted[f'zrunbook_token_user_pin_count_low{{token="{LABEL}"}}'] == 1, counted
    count_low = [{"exp_labels": {"severity": "warning", "instance": INSTANCE, "token": LABEL},
                  "exp_annotations": {"summary": f"{INSTANCE}: a wrong user PIN was tried on token {LABEL}",
                                      "description": "A wrong PIN since the last good login, and no good login for "
                                                     "15 minutes."}}]
    assert alert_problems(tmp_path, rules, counted, now, {"TokenUserPinCountLow": count_low}) == []

    # a certificate 36 days into 47: past three quarters, the check fails and the expiry alert fires
    age_served_certificate(host, 47, 36)
    late = reader.as_root(host, f"CA_FILE={ca} bash check-certificate-expiry.sh {SOURCE} www.example.com")
    assert late.rc == 1, output(late)
    assert "is past three quarters of its lifetime" in late.stderr, output(late)
    run_service(host)
    aged, now = exported(host, tmp_path, "aged.prom")
    left = int(aged[f'zrunbook_certificate_not_after_timestamp_seconds{{source="{SOURCE}"}}']) - now
    expires = [{"exp_labels": {"severity": "warning", "instance": INSTANCE, "source": SOURCE},
                "exp_annotations": {"summary": f"{INSTANCE}: the certificate at {SOURCE} expires in "
                                               f"{humanize_duration(left)}"}}]
    # the reload's workers logged in with the good PIN, which clears the count (the page: a good login hides who did it)
    assert aged[f'zrunbook_token_user_pin_count_low{{token="{LABEL}"}}'] == 0, aged
    assert alert_problems(tmp_path, rules, aged, now, {"CertificateExpiresSoon": expires}) == []


def analyze(host, *units: str):
    return host.run(f"systemd-analyze verify {' '.join(units)} 2>&1")


@pytest.mark.negative("monitor/zrunbook-textfile.service", expects="systemd-analyze verify reports the bad setting")
@pytest.mark.snippet(SERVICE, TIMER, checker="systemd-analyze")
def test_the_exporter_s_timer_and_service_verify_with_systemd_analyze_and_a_bad_setting_does_not(fresh_host):
    """systemd 257's own check, on the units as the page installs them, with the bundle installed where the service
    runs the exporter. It exits 0 on a setting it ignores (a value it cannot parse is a warning), so a clean verify is
    exit 0 and no output."""
    host = fresh_host
    bundle.install(host)
    units = ("/etc/systemd/system/zrunbook-textfile.service", "/etc/systemd/system/zrunbook-textfile.timer")
    ok(host, f"cp {bundle.installed(SERVICE)} {bundle.installed(TIMER)} /etc/systemd/system/")
    good = analyze(host, *units)
    assert good.rc == 0, output(good)
    assert good.stdout.strip() == "", output(good)
    # negatives: a time limit systemd ignores (a hung run would hold the timer), and a program that is not there
    ok(host, f"sed 's/^TimeoutStartSec=2min/TimeoutStartSec=two minutes/' {units[0]} >/tmp/timeout.service")
    ignored = analyze(host, "/tmp/timeout.service")
    assert "Failed to parse TimeoutStartSec" in ignored.stdout, output(ignored)
    ok(host, f"sed 's#^ExecStart=/bin/bash #ExecStart=/usr/local/bin/bash #' {units[0]} >/tmp/missing.service")
    missing = analyze(host, "/tmp/missing.service")
    assert missing.rc == 1, output(missing)
    assert "is not executable: No such file or directory" in missing.stdout, output(missing)
