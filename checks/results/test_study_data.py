"""The studies' results transcribed under snippets/results/studies/: columns, units, ranges, sources and the
cross-checks the text allows; each negative case under checks/results/bad/ is a mistake the validator must catch."""

import csv
from pathlib import Path

import pytest

from zrunbook import SNIPPETS
from zrunbook.results.study_data import validate

ROOT = Path(__file__).resolve().parents[2]
STUDIES = SNIPPETS / "results" / "studies"
BAD = Path(__file__).resolve().parent / "bad"
FILES = sorted(p.name for p in STUDIES.glob("*.csv"))


def test_every_study_has_a_data_file():
    assert FILES == ["cics-tg-2015-tps.csv", "jsse-cex2a.csv", "was-2013-daytrader.csv",
                     "webseal-2007-cex2c-queue.csv", "webseal-2007.csv"]


@pytest.mark.snippet("results/studies/was-2013-daytrader.csv", checker="study-data")
def test_was_data_covers_both_scenarios_both_key_sizes_and_every_metric():
    with open(STUDIES / "was-2013-daytrader.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    seen = {(r["scenario"][0], r["key_bits"], r["metric"]) for r in rows}
    for scenario in "12":
        for bits in ("2048", "4096"):
            for metric in ("throughput", "CPU load", "CPU cost per transaction", "response time"):
                assert (scenario, bits, metric) in seen, (scenario, bits, metric)


@pytest.mark.snippet("results/studies/webseal-2007.csv", checker="study-data")
def test_validator_rejects_the_webseal_12_percent_when_the_row_does_not_note_it():
    problems = validate(BAD / "webseal-12-percent" / "webseal-2007.csv")
    assert problems == ["webseal-2007.csv: ssl-sw-vs-tcp-5.8k x ssl-hw-vs-sw-5.8k = 0.845 but ssl-hw-vs-tcp-5.8k "
                        "states 0.88, and no row notes it"]


@pytest.mark.snippet("results/studies/was-2013-daytrader.csv", checker="study-data")
def test_validator_rejects_the_was_five_and_six_times_for_one_bar_when_not_noted():
    problems = validate(BAD / "was-2013-five-and-six-times-unnoted.csv")
    assert len(problems) == 1
    assert "s2-4096-tput-1cex3 (5) and s2-4096-tput-1cex3-conclusion (6)" in problems[0]


@pytest.mark.snippet("results/studies/was-2013-daytrader.csv", checker="study-data")
def test_validator_rejects_a_value_that_disagrees_with_its_words():
    problems = validate(BAD / "was-2013-value-disagrees-with-statement.csv")
    assert len(problems) == 1
    assert "says 1.2, the value is 1.3" in problems[0]


@pytest.mark.snippet("results/studies/was-2013-daytrader.csv", checker="study-data")
def test_validator_rejects_shares_of_an_increase_that_do_not_add_up():
    problems = validate(BAD / "was-2013-shares-not-adding-up.csv")
    assert problems == ["was-2013-shares-not-adding-up.csv: the shares of the increase for "
                        "('1 WAS HTTPS', '2048') add up to 0.9, not 1"]


@pytest.mark.snippet("results/studies/was-2013-daytrader.csv", checker="study-data")
def test_validator_rejects_an_unknown_unit():
    problems = validate(BAD / "was-2013-unknown-unit.csv")
    assert problems
    assert all("unit 'CPUs' is not one of" in p for p in problems)


@pytest.mark.snippet("results/studies/jsse-cex2a.csv", checker="study-data")
def test_validator_rejects_rows_without_a_source():
    problems = validate(BAD / "jsse-row-without-source.csv")
    assert len(problems) == 4
    assert all(p.endswith("no source") for p in problems)


@pytest.mark.snippet("results/studies/cics-tg-2015-tps.csv", checker="study-data")
def test_validator_rejects_an_ssl_rate_above_plain_tcp():
    problems = validate(BAD / "cics-tg-ssl-above-tcp.csv")
    assert problems == ["cics-tg-ssl-above-tcp.csv: SSL_RSA_WITH_NULL_SHA (32K COMMAREA, 600 clients) 1200 TPS is "
                        "above TCP 1185: SSL cannot be faster than plain TCP"]


@pytest.mark.snippet("results/studies/webseal-2007-cex2c-queue.csv", checker="study-data")
def test_validator_rejects_a_queue_histogram_whose_average_is_not_the_stated_one():
    problems = validate(BAD / "queue-average" / "webseal-2007-cex2c-queue.csv")
    assert problems == ["webseal-2007-cex2c-queue.csv: the histogram's average is 2.97, the study states 2.88"]
