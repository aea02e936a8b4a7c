"""Shown output of the crypto chapter, regenerated from the s390x host (qemu-user) and diffed.

No container has a Crypto Express card or real CPACF: qemu emulates CPACF SHA-512 (KIMD/KLMD) and the
random number generator, so these files show what such a host prints, and the pages say so.
Refresh with ZR_REGENERATE=1 (see zrunbook/shown_output.py).
"""

import re

import pytest

from checks.hosts.steps import run_snippet, start_pkcsslotd
from checks.hosts.token import init_token
from zrunbook.crypto import token_flags
from zrunbook.shown_output import as_a_terminal_shows_it, assert_shown_output, normalise_common

pytestmark = pytest.mark.only_hosts("debian13-s390x")

ICA_SLOT = "1"  # openCryptoki's default ICA slot; test_ica_slot_is_the_default_one proves it


def plain(text: str) -> str:
    """Trailing blanks only: the CPUINFO masks are the point of these files and must stay as printed."""
    text = as_a_terminal_shows_it(text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()) + "\n"


def no_token_time(text: str) -> str:
    return normalise_common(re.sub(r"(Time:\s*)\S+", r"\1<time>", text))


def no_rates(text: str) -> str:
    return plain(re.sub(r"blocks: [\d.]+k", "blocks: <rate>k", text))


@pytest.mark.snippet("crypto/cpacf/icainfo.out", checker="output-regenerated")
def test_icainfo_output_is_what_the_s390x_host_prints(host):
    assert_shown_output("crypto/cpacf/icainfo.out", host.check_output("icainfo"))


@pytest.mark.snippet("crypto/adapters/lszcrypt-no-adapters.out", checker="output-regenerated")
def test_lszcrypt_without_adapters_says_the_driver_is_not_available(host):
    result = host.run("lszcrypt")
    assert result.rc != 0
    assert_shown_output("crypto/adapters/lszcrypt-no-adapters.out", result.stdout + result.stderr)


@pytest.mark.negative("crypto/adapters/check-ap-bus.sh",
                      expects="without an AP bus the check stops: No AP bus in /sys/bus/ap")
@pytest.mark.snippet("crypto/adapters/check-ap-bus.sh", checker="testinfra")
def test_ap_bus_check_stops_with_a_sentence_when_there_is_no_ap_bus(host):
    result = run_snippet(host, "crypto/adapters/check-ap-bus.sh")
    assert result.rc == 1
    assert "No AP bus in /sys/bus/ap" in result.stderr


@pytest.mark.snippet("crypto/verify/openssl-version-a.out", checker="output-regenerated")
def test_openssl_version_a_output_is_what_the_s390x_host_prints(host):
    assert_shown_output("crypto/verify/openssl-version-a.out", host.check_output("openssl version -a"), plain)


@pytest.mark.snippet("crypto/verify/openssl-s390xcap-ab.sh", "crypto/verify/openssl-s390xcap-ab.out",
                     checker="output-regenerated")
def test_openssl_s390xcap_switches_cpacf_sha512_off(host):
    result = host.run("SECONDS_PER_RUN=1 bash /snippets/crypto/verify/openssl-s390xcap-ab.sh")
    assert result.rc == 0, result.stderr
    cpuinfo = [line for line in result.stdout.splitlines() if line.startswith("CPUINFO:")]
    assert len(cpuinfo) == 2
    assert ":kimd:0x9000000000000000:" in cpuinfo[0], "A: CPACF SHA-512 (KIMD function 3) is offered"
    assert ":kimd:0x0:0x0:" in cpuinfo[1], "B: the mask takes KIMD away"
    assert_shown_output("crypto/verify/openssl-s390xcap-ab.out", result.stdout, no_rates)


@pytest.mark.snippet("crypto/verify/sha512-on-ica-token.sh", "crypto/verify/sha512-on-ica-token.out",
                     checker="output-regenerated")
def test_icastats_counts_sha512_in_hardware_after_the_ica_token_hashes(host):
    start_pkcsslotd(host)
    result = run_snippet(host, "crypto/verify/sha512-on-ica-token.sh")
    assert result.rc == 0, result.stderr
    hardware = int(re.search(r"(\d+) in hardware", result.stdout).group(1))
    assert hardware > 0
    assert_shown_output("crypto/verify/sha512-on-ica-token.out", result.stdout)


@pytest.mark.snippet("crypto/token/init-token.sh", "crypto/token/pkcsconf-t.before.out",
                     "crypto/token/pkcsconf-t.after.out", checker="output-regenerated")
def test_pkcsconf_shows_the_ica_token_before_and_after_initialisation(fresh_host):
    start_pkcsslotd(fresh_host)
    before = fresh_host.check_output(f"pkcsconf -t -c {ICA_SLOT}")
    result = init_token(fresh_host)
    assert result.rc == 0, result.stderr
    after = fresh_host.check_output(f"pkcsconf -t -c {ICA_SLOT}")
    assert token_flags.problems(token_flags.flags_in(before))
    assert token_flags.problems(token_flags.flags_in(after)) == []
    # What the page says under the shown output: the raw line ends '|', backspace, ')'; a terminal shows ')'.
    assert re.search(r"^\tFlags: .*\|\x08\)$", before, re.M), repr(before)
    failures = []
    for rel, text in (("crypto/token/pkcsconf-t.before.out", before), ("crypto/token/pkcsconf-t.after.out", after)):
        try:
            assert_shown_output(rel, text, no_token_time)
        except AssertionError as failure:  # regenerate or diff both files, then report
            failures.append(str(failure))
    assert not failures, "\n".join(failures)


def test_ica_slot_is_the_default_one(host):
    start_pkcsslotd(host)
    assert "Model: ICA" in host.check_output(f"pkcsconf -t -c {ICA_SLOT}")
