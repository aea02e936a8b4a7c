"""The KVM host's files for passing Crypto Express queues to a guest (docs/how-to/crypto/assign-adapters.md).

No check host is a KVM host on IBM Z, but the two formats have their own readers on the amd64 host: mdevctl 1.4
(Debian 13) defines the page's mediated device from its JSON in a scratch root (MDEVCTL_ENV_ROOT, so nothing of
the container's /etc is touched), and libvirt's virt-xml-validate checks the page's hostdev element inside a
minimal s390x domain against libvirt's domain schema. Each has negative cases the same tools must refuse. The
host-side script stops with a sentence where there is no AP bus, as on both check hosts.
"""

import shlex

import pytest

from checks.hosts.engine import REPO
from checks.hosts.steps import run_snippet
from checks.hosts.util import copy_to, output
from zrunbook import SNIPPETS

JSON = "crypto/kvm/vfio-ap-mdev.json"
HOSTDEV = "crypto/kvm/vfio-ap-hostdev.xml"
DEFINE = "crypto/kvm/define-vfio-ap-mdev.sh"
BAD = REPO / "checks/crypto/bad/kvm"
# what mdevctl 1.4 says about each broken definition
MDEVCTL_REFUSES = {
    "vfio-ap-mdev-attrs-as-object.json": "attributes field is not an array",
    "vfio-ap-mdev-number-not-string.json": "value must be of type str",
    "vfio-ap-mdev-two-attributes-in-one-object.json": "too many fields",
}
XML_BAD = ("vfio-ap-hostdev-driver-name-as-model.xml", "vfio-ap-hostdev-apqn-as-uuid.xml",
           "vfio-ap-hostdev-without-model.xml")
SCRATCH = "/tmp/mdevctl-root"


def mdevctl(host, args: str):
    """mdevctl in a scratch root: the three folders its self-check wants, and nothing else."""
    host.run_expect([0], f"mkdir -p {SCRATCH}/etc/mdevctl.d {SCRATCH}/usr/lib/mdevctl/scripts.d/callouts "
                         f"{SCRATCH}/usr/lib/mdevctl/scripts.d/notifiers")
    return host.run(f"MDEVCTL_ENV_ROOT={SCRATCH} mdevctl {args}")


def define(host, text: str):
    copy_to(host, text, "/tmp/device.json")
    return mdevctl(host, "define --parent matrix --jsonfile /tmp/device.json")


def validate_hostdev(host, element: str):
    """virt-xml-validate of a minimal s390x KVM domain whose only device is element (the file without its
    leading comment)."""
    body = element.split("-->", 1)[1] if "-->" in element else element
    domain = ("<domain type='kvm'><name>guest</name><memory>1048576</memory>"
              "<os><type arch='s390x' machine='s390-ccw-virtio'>hvm</type></os>"
              f"<devices>{body}</devices></domain>\n")
    copy_to(host, domain, "/tmp/domain.xml")
    return host.run("virt-xml-validate /tmp/domain.xml domain")


@pytest.mark.only_hosts("debian13-amd64", why="mdevctl and virt-xml-validate are in the amd64 image only")
@pytest.mark.snippet(JSON, checker="mdevctl")
def test_mdevctl_defines_the_vfio_ap_device_with_its_four_attributes_in_order(fresh_host):
    r = define(fresh_host, (SNIPPETS / JSON).read_text())
    assert r.rc == 0, output(r)
    uuid = r.stdout.strip()
    listed = mdevctl(fresh_host, f"list -d --uuid {shlex.quote(uuid)} --dumpjson")
    assert listed.rc == 0, output(listed)
    assert '"mdev_type": "vfio_ap-passthrough"' in listed.stdout
    assert '"start": "auto"' in listed.stdout
    order = [line.split('"')[1] for line in listed.stdout.splitlines() if '"assign_' in line]
    assert order == ["assign_adapter", "assign_adapter", "assign_domain", "assign_control_domain"]
    assert fresh_host.file(f"{SCRATCH}/etc/mdevctl.d/matrix/{uuid}").exists
    again = mdevctl(fresh_host, f"define --parent matrix --uuid {shlex.quote(uuid)} --jsonfile /tmp/device.json")
    assert again.rc != 0
    assert "refusing to overwrite" in again.stderr


@pytest.mark.only_hosts("debian13-amd64", why="mdevctl and virt-xml-validate are in the amd64 image only")
@pytest.mark.snippet(JSON, checker="mdevctl")
@pytest.mark.parametrize("bad", sorted(MDEVCTL_REFUSES))
def test_mdevctl_refuses_each_broken_definition(fresh_host, bad):
    r = define(fresh_host, (BAD / bad).read_text())
    assert r.rc != 0, output(r)
    assert MDEVCTL_REFUSES[bad] in r.stderr, output(r)
    assert fresh_host.run(f"find {SCRATCH}/etc/mdevctl.d -type f | grep -q .").rc == 1  # nothing defined


@pytest.mark.only_hosts("debian13-amd64", why="mdevctl and virt-xml-validate are in the amd64 image only")
@pytest.mark.snippet(HOSTDEV, checker="virt-xml-validate")
def test_libvirt_schema_accepts_the_vfio_ap_hostdev(fresh_host):
    r = validate_hostdev(fresh_host, (SNIPPETS / HOSTDEV).read_text())
    assert r.rc == 0, output(r)
    assert "/tmp/domain.xml validates" in r.stdout + r.stderr


@pytest.mark.only_hosts("debian13-amd64", why="mdevctl and virt-xml-validate are in the amd64 image only")
@pytest.mark.snippet(HOSTDEV, checker="virt-xml-validate")
@pytest.mark.parametrize("bad", XML_BAD)
def test_libvirt_schema_refuses_each_broken_hostdev(fresh_host, bad):
    r = validate_hostdev(fresh_host, (BAD / bad).read_text())
    assert r.rc != 0, output(r)
    assert "fails to validate" in r.stdout + r.stderr


@pytest.mark.negative("crypto/kvm/define-vfio-ap-mdev.sh",
                      expects="off a KVM host of an IBM Z the script stops with a sentence (not IBM Z, mdevctl "
                              "missing, no AP bus)")
@pytest.mark.uses("crypto/kvm/vfio-ap-mdev.json")
@pytest.mark.arch_dependent("the script's precondition checks differ on s390x")
@pytest.mark.snippet(DEFINE, checker="testinfra")
def test_define_script_stops_with_a_sentence_off_a_kvm_host(fresh_host):
    """amd64: the script says this is not IBM Z (before, it asked for chzdev from s390-tools, which has no amd64
    package). s390x (qemu, no mdevctl in the image): it says what to install; with stand-ins of mdevctl and chzdev
    that do nothing it gets to the AP bus, which a container does not have, and says where to run it. Nothing is
    defined in any case."""
    copy_to(fresh_host, (SNIPPETS / JSON).read_text(), "/tmp/device.json")
    if fresh_host.run("uname -m").stdout.strip() != "s390x":
        r = run_snippet(fresh_host, DEFINE, "/tmp/device.json")
        assert r.rc == 1, output(r)
        assert "This is not IBM Z (x86_64): Crypto Express queues exist only on the KVM host of an IBM Z" in r.stderr
        assert "install" not in r.stderr
        return
    missing = run_snippet(fresh_host, DEFINE, "/tmp/device.json")
    assert missing.rc == 1, output(missing)
    assert "mdevctl is missing: install the mdevctl package." in missing.stderr
    fresh_host.run_expect([0], "ln -s /bin/true /usr/local/bin/mdevctl && ln -s /bin/true /usr/local/bin/chzdev")
    r = run_snippet(fresh_host, DEFINE, "/tmp/device.json")
    assert r.rc == 1, output(r)
    assert "This system has no AP bus: run this on the KVM host of an IBM Z" in r.stderr
    assert fresh_host.run("find /etc/mdevctl.d -type f 2>/dev/null | grep -q .").rc == 1
