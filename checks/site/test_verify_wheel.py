"""The verify tool for a reader who has only the site: its wheel, downloaded from the built site, installed on a clean
container host by the page's step, and run from there against a host.

The host (Debian 13 amd64, the Apache token site of the IHS chapter, started from the prepared TOKEN_KEY state) is
both the reader's machine and the target: the reader, root there, downloads the wheel, its ``.sha256``, the snippet
bundle and the install step from the site the run built (served on localhost, copied into the container, which has
no network), sets up the verify account from the bundle's ``verify`` folder, and reaches the same host over SSH as
the login user ``zrops`` through ``ProxyCommand /usr/sbin/sshd -i`` in root's own ``~/.ssh/config``, host key
checking on. The container cannot reach PyPI, so the wheel's dependencies come from a wheelhouse the page's other
step fills on this machine (pip download from PyPI for Debian 13's Python 3.13 and glibc 2.41, kept in
build/verify-wheelhouse between runs while the dependencies stay the same). The image has Python 3.13 without
Debian's python3-venv, so the install without a wheelhouse must fail and say what to install.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import urllib.request
import zipfile
from pathlib import Path

import pytest

from checks.hosts import apache
from checks.hosts import engine as eng
from checks.hosts.apache import TOKEN_KEY
from checks.hosts.plugin import SELECTED
from checks.hosts.steps import reads
from checks.hosts.token import PINS
from checks.hosts.util import copy_to, ok
from zrunbook import ROOT, SNIPPETS
from zrunbook.verify.steps import STEPS

TOOL = "verify/install-verify-tool.sh"
WHEELHOUSE_STEP = "verify/install-verify-tool-wheelhouse.sh"
TARGET = ("3.13", "manylinux_2_41_x86_64")  # Debian 13: python3 3.13, glibc 2.41
WHEELHOUSES = ROOT / "build" / "verify-wheelhouse"
DL = "/root/dl"
VENV = "/root/zrunbook-verify"
SITE_CA = "/etc/ssl/certs/zrunbook-site-ca.pem"  # the profile's ca_file
APACHE_STEPS = {s.id for s in STEPS if s.part == "apache"}
SSH_SELF = (
    "set -e; rm -f /etc/ssh/ssh_host_*; ssh-keygen -A >/dev/null; mkdir -p /run/sshd; "
    "grep -q \"$(hostname)\" /etc/hosts || echo \"127.0.1.1 $(hostname)\" >> /etc/hosts; "
    "id zrops >/dev/null 2>&1 || useradd -m -s /bin/bash zrops; "
    "install -d -m 700 /root/.ssh; ssh-keygen -q -t ed25519 -N '' -f /root/.ssh/id_ed25519; "
    "install -d -m 700 -o zrops -g zrops /home/zrops/.ssh; "
    "install -m 600 -o zrops -g zrops /root/.ssh/id_ed25519.pub /home/zrops/.ssh/authorized_keys; "
    "echo \"self $(cut -d' ' -f1,2 /etc/ssh/ssh_host_ed25519_key.pub)\" > /root/.ssh/known_hosts; "
    "printf 'Host self\\n  ProxyCommand /usr/sbin/sshd -i\\n  StrictHostKeyChecking yes\\n  LogLevel ERROR\\n' "
    "> /root/.ssh/config")
INVENTORY = "all:\n  children:\n    webservers:\n      hosts:\n        self:\n          ansible_user: zrops\n"

pytestmark = [pytest.mark.xdist_group("verify-wheel"),
              pytest.mark.only_hosts("debian13-amd64", why="the wheelhouse is made for manylinux_2_41_x86_64 (TARGET)")]


def fetch(base_url: str, rel: str, dest: Path) -> Path:
    with urllib.request.urlopen(f"{base_url}/{rel}", timeout=30) as got:
        dest.write_bytes(got.read())
    return dest


def wheelhouse(wheel: Path) -> Path:
    """The page's wheelhouse step run here for Debian 13, once per set of dependencies (kept in build/)."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        requires = sorted(line for line in zf.read(meta).decode().splitlines() if line.startswith("Requires-Dist:"))
    key = hashlib.sha256("\n".join([*requires, *TARGET]).encode()).hexdigest()[:16]
    folder = WHEELHOUSES / key
    if not (folder / ".complete").exists():
        shutil.rmtree(folder, ignore_errors=True)
        run = subprocess.run(["bash", str(SNIPPETS / WHEELHOUSE_STEP), str(wheel), str(folder), *TARGET],
                             capture_output=True, text=True, timeout=600, check=False)
        assert run.returncode == 0, f"the wheelhouse step failed (it needs PyPI from this machine):\n{run.stderr}"
        (folder / ".complete").write_text(run.stdout, encoding="utf-8")
    for old in folder.glob("zrunbook-*.whl"):  # pip download saves the tool's wheel too: the site's is the one
        old.unlink()
    return folder


@pytest.fixture(scope="module", params=SELECTED, ids=str)
@reads("verify/install-verify-tool-wheelhouse.sh")  # the reader's install step, run while the fixture sets up
def reader(request, site, base_url, zr_host_pool, tmp_path_factory):
    """The host with the wheel, the bundle and the install step from the site, and the results of each install."""
    downloads = tmp_path_factory.mktemp("site-downloads")
    names = sorted(p.name for p in (site / "downloads").glob("zrunbook-*.whl"))
    assert len(names) == 1, f"the site offers {names} as the verify tool's wheel, not one wheel"
    wheel = fetch(base_url, f"downloads/{names[0]}", downloads / names[0])
    for rel in (f"downloads/{names[0]}.sha256", "downloads/zrunbook-snippets.tar.gz",
                "downloads/zrunbook-snippets.tar.gz.sha256"):
        fetch(base_url, rel, downloads / rel.split("/")[-1])
    step = fetch(base_url, f"_snippets/{TOOL}", downloads / TOOL.split("/")[-1])  # the snippet's download link
    house = wheelhouse(wheel)
    # A tampered copy: one byte changed inside, the .sha256 of the site beside it.
    tampered = downloads / "tampered"
    tampered.mkdir()
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 0x01
    (tampered / wheel.name).write_bytes(bytes(data))
    shutil.copy(downloads / f"{wheel.name}.sha256", tampered)

    host = zr_host_pool.start(request.param, state=TOKEN_KEY)
    ca = apache.serve_token(host)
    ok(host, f"install -m 644 {ca} {SITE_CA}")
    cli = eng.Engine.detect().cli
    ok(host, f"mkdir -p {DL}")
    for path, name in [*((p, p.name) for p in downloads.iterdir()), (house, "wheelhouse")]:
        subprocess.run([cli, "cp", str(path), f"{host.zr_container}:{DL}/{name}"], check=True, capture_output=True)
    ok(host, f"cd {DL} && sha256sum -c zrunbook-snippets.tar.gz.sha256 && tar xzf zrunbook-snippets.tar.gz")
    ok(host, SSH_SELF)
    ok(host, f"bash {DL}/zrunbook-snippets/verify/install-verify-account.sh zrops www-data")
    copy_to(host, INVENTORY, f"{DL}/inventory.yml")
    install = f"cd {DL} && ZRUNBOOK_VENV={{venv}} bash {step.name} {{wheel}} {{house}}"
    runs = {
        "tampered": host.run(install.format(venv="/root/tampered", wheel=f"tampered/{wheel.name}", house="wheelhouse")),
        "no-venv-module": host.run(install.format(venv="/root/online", wheel=f"./{wheel.name}", house="")),
        "offline": host.run(install.format(venv=VENV, wheel=f"./{wheel.name}", house="wheelhouse")),
    }
    runs["verify"] = host.run(
        f"cd {DL} && TOKEN_USER_PIN={PINS['TOKEN_USER_PIN']} {VENV}/bin/zrunbook verify --inventory inventory.yml "
        f"--profile zrunbook-snippets/verify/site-profile.toml --out {DL}/reports")
    report = host.run(f"cat {DL}/reports/verify.json")
    yield {"host": host, "runs": runs, "wheel": wheel,
           "report": json.loads(report.stdout) if report.rc == 0 else None}
    zr_host_pool.remove(host)


def said(run) -> str:
    return f"rc={run.rc}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"


@pytest.mark.snippet(TOOL, WHEELHOUSE_STEP, checker="wheel-install")
def test_the_wheel_from_the_site_installs_offline_and_gives_verify_and_doctor(reader):
    run = reader["runs"]["offline"]
    assert run.rc == 0, said(run)
    assert "--inventory" in run.stdout, said(run)  # zrunbook verify --help
    assert "--profile" in run.stdout, said(run)
    assert f"installed: {VENV}/bin/zrunbook" in run.stdout
    doctor = reader["host"].run(f"{VENV}/bin/zrunbook doctor --help")
    assert doctor.rc == 0, said(doctor)
    assert "--host" in doctor.stdout, said(doctor)
    other = reader["host"].run(f"{VENV}/bin/zrunbook bundle")
    assert other.rc == 2, said(other)
    assert "is not a command of the installed tool" in other.stderr, said(other)


@pytest.mark.snippet(TOOL, "verify/site-profile.toml", checker="wheel-install")
@pytest.mark.reader_walk("how-to/verify-your-fleet")
def test_the_installed_tool_verifies_the_host_over_ssh_and_every_apache_step_passes(reader):
    run, report = reader["runs"]["verify"], reader["report"]
    assert report is not None, f"the installed tool wrote no report:\n{said(run)}"
    found = {r["step"]: r for r in report["results"] if r["host"] == "self"}
    assert {s for s, r in found.items() if r["verdict"] == "passed"} == APACHE_STEPS, said(run)
    assert {r["verdict"] for s, r in found.items() if s not in APACHE_STEPS} == {"not applicable"}
    assert "the token signed" in found["apache-token-signs"]["message"]
    assert run.rc == 0, said(run)
    assert PINS["TOKEN_USER_PIN"] not in json.dumps(report)
    # the installed tool ran its own copies of the snippets, not a checkout's (the container has none of this one)
    where = reader["host"].run(f"{VENV}/bin/python -c 'import zrunbook; print(zrunbook.SNIPPETS)'").stdout.strip()
    assert re.fullmatch(rf"{VENV}/lib/python3\.\d+/site-packages/zrunbook/_shipped/snippets", where), where


@pytest.mark.negative("verify/install-verify-tool.sh",
                      expects="a tampered wheel fails the SHA-256 check and nothing is installed")
@pytest.mark.snippet(TOOL, checker="wheel-install")
def test_a_tampered_wheel_fails_the_sha256_check_and_nothing_is_installed(reader):
    run = reader["runs"]["tampered"]
    assert run.rc == 1, said(run)
    assert "does not have the SHA-256 in" in run.stderr, said(run)
    assert "install nothing" in run.stderr, said(run)
    assert not reader["host"].file("/root/tampered").exists


@pytest.mark.snippet(TOOL, checker="wheel-install")
def test_without_a_wheelhouse_and_without_python3_venv_the_step_says_what_to_install(reader):
    run = reader["runs"]["no-venv-module"]
    assert run.rc == 1, said(run)
    assert "install python3-venv" in run.stderr, said(run)
    assert not reader["host"].file("/root/online").exists


@pytest.mark.negative("verify/install-verify-tool-wheelhouse.sh",
                      expects="a platform tag pip cannot use is refused before anything is fetched")
@pytest.mark.snippet(WHEELHOUSE_STEP, checker="wheel-install")
def test_the_wheelhouse_step_refuses_a_platform_pip_cannot_use(reader, tmp_path):
    """On this machine, with the wheel of the site; the platform is refused before pip fetches anything."""
    step = str(SNIPPETS / WHEELHOUSE_STEP)
    run = subprocess.run(["bash", step, str(reader["wheel"]), str(tmp_path / "house"), "3.13",
                          "x86_64"], capture_output=True, text=True, check=False)
    assert run.returncode == 1
    assert "is not a platform tag such as manylinux_2_41_x86_64" in run.stderr, run.stderr
    assert not (tmp_path / "house").exists()


def shown_sha_problems(page: str, downloads: Path) -> list[str]:
    """Each download the page names with a SHA-256 against the file the site holds and its .sha256 file."""
    shown = dict(re.findall(r'href="\.\./downloads/([^"]+\.(?:whl|gz))">.*?SHA-256: <code[^>]*><span class="pre">'
                            r'([0-9a-f]{64})', page, re.S))
    out = [] if shown else ["the page shows no download with its SHA-256"]
    for name, sha in shown.items():
        file = downloads / name
        if not file.is_file():
            out.append(f"{name}: not in the site's downloads")
            continue
        if hashlib.sha256(file.read_bytes()).hexdigest() != sha:
            out.append(f"{name}: the page shows {sha[:12]}..., the file has another SHA-256")
        if (downloads / f"{name}.sha256").read_text(encoding="utf-8") != f"{sha}  {name}\n":
            out.append(f"{name}.sha256 does not hold the SHA-256 the page shows")
    return out


def test_the_verify_page_shows_the_sha256_of_the_files_the_site_offers(site):
    page = (site / "how-to" / "verify-your-fleet.html").read_text(encoding="utf-8")
    assert sorted(re.findall(r'href="\.\./downloads/([^"]+\.(?:whl|gz))"', page)) == \
        sorted(p.name for p in (site / "downloads").iterdir() if p.suffix in (".whl", ".gz"))
    assert shown_sha_problems(page, site / "downloads") == []
    name = next(p.name for p in (site / "downloads").glob("*.whl"))
    sha = hashlib.sha256((site / "downloads" / name).read_bytes()).hexdigest()
    assert shown_sha_problems(page.replace(sha, "0" * 64), site / "downloads") == [
        f"{name}: the page shows 000000000000..., the file has another SHA-256",
        f"{name}.sha256 does not hold the SHA-256 the page shows"]
