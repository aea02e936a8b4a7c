"""The start-order check: the AP bus has bound its queues to zcrypt before the token's users start.

On the s390x host (qemu) there is no AP bus, so the snippet's stop is checked for real; the outcome (queues
bound to cex4queue, /dev/z90crypt present) and each way it can be missing are checked against a stand-in
AP bus directory, built as the kernel lays it out (bindings attribute, queue devices with a driver link).
/dev/null stands in for the character device /dev/z90crypt.
"""

import pytest

from checks.hosts.steps import snippet_path

pytestmark = pytest.mark.only_hosts("debian13-s390x")
SNIPPET = "crypto/adapters/check-ap-ready.sh"


def stand_in(host, bindings: str, queues: dict[str, str]) -> None:
    """An AP bus under /tmp/ap: `bindings` as the kernel prints it, each queue linked to its driver."""
    lines = ["rm -rf /tmp/ap /tmp/drivers", "mkdir -p /tmp/ap/devices /tmp/drivers",
             f"echo '{bindings}' > /tmp/ap/bindings"]
    for queue, driver in queues.items():
        lines.append(f"mkdir -p /tmp/ap/devices/{queue}")
        if driver:
            lines += [f"mkdir -p /tmp/drivers/{driver}",
                      f"ln -s /tmp/drivers/{driver} /tmp/ap/devices/{queue}/driver"]
    host.run_expect([0], " && ".join(lines))


def run(host, env: str = "Z90CRYPT=/dev/null"):
    return host.run(f"AP_BUS=/tmp/ap AP_WAIT_SECONDS=1 {env} bash {snippet_path(SNIPPET)}")


@pytest.mark.negative("crypto/adapters/check-ap-ready.sh",
                      expects="the check stops with a sentence: there is no AP bus")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_ap_ready_stops_with_a_sentence_when_there_is_no_ap_bus(host):
    result = host.run(f"bash {snippet_path(SNIPPET)}")
    assert result.rc == 1
    assert "No AP bus in /sys/bus/ap" in result.stderr


@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_ap_ready_passes_when_every_queue_is_bound_to_zcrypt(fresh_host):
    """The outcome: queues bound to cex4queue and the device there, so the token's users may start."""
    stand_in(fresh_host, "2/2 (complete)", {"05.0004": "cex4queue", "06.0004": "cex4queue"})
    result = run(fresh_host)
    assert result.rc == 0, result.stderr
    assert "2 AP queue(s) bound to zcrypt (cex4queue)" in result.stdout


@pytest.mark.negative("crypto/adapters/check-ap-ready.sh",
                      expects="the check stops while the AP bus has not bound its queues")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_ap_ready_stops_while_the_bus_has_not_bound_its_queues(fresh_host):
    stand_in(fresh_host, "1/2", {"05.0004": "cex4queue", "06.0004": ""})
    result = run(fresh_host)
    assert result.rc == 1
    assert "has not bound all its queues to drivers after 1 s" in result.stderr
    assert "says 1/2" in result.stderr


@pytest.mark.negative("crypto/adapters/check-ap-ready.sh",
                      expects="the check stops: the queues are bound to vfio_ap, not to the zcrypt driver")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_ap_ready_stops_on_a_kvm_host_whose_queues_belong_to_vfio_ap(fresh_host):
    stand_in(fresh_host, "2/2 (complete)", {"05.0004": "vfio_ap", "05.0005": "vfio_ap"})
    result = run(fresh_host)
    assert result.rc == 1
    assert "bound to vfio_ap: this is a KVM host" in result.stderr


@pytest.mark.negative("crypto/adapters/check-ap-ready.sh", expects="the check stops: no AP queue is assigned")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_ap_ready_stops_when_no_queue_is_assigned(fresh_host):
    stand_in(fresh_host, "0/0 (complete)", {})
    result = run(fresh_host)
    assert result.rc == 1
    assert "No AP queue is assigned to this system" in result.stderr


@pytest.mark.negative("crypto/adapters/check-ap-ready.sh", expects="the check stops when the zcrypt device is missing")
@pytest.mark.snippet(SNIPPET, checker="testinfra")
def test_ap_ready_stops_when_the_zcrypt_device_is_missing(fresh_host):
    stand_in(fresh_host, "1/1 (complete)", {"05.0004": "cex4queue"})
    result = run(fresh_host, "Z90CRYPT=/tmp/no-z90crypt")
    assert result.rc == 1
    assert "/tmp/no-z90crypt is missing" in result.stderr
