"""The backup page (docs/how-to/back-up-token.md) walked as its reader walks it, from the built site.

Three machines, each a container with no network: the offline machine that keeps the keys (a plain container of the
host image, where an ordinary login, ``keeper``, runs the key step in its home), the source (the Apache token site
of the IHS chapter, the TOKEN_KEY state, booted with systemd as a server is: pkcsslotd and Apache are systemd's
units) and the host that gets the token (a new container of the host image, booted too, with openCryptoki installed
and nothing else done). Every script is the one the page's download links offer on the site this run built (served
on localhost; the links are read from the page's HTML, in page order), copied into the machine that runs it, and
run there in a login shell (``su - USER``) as the user the page names, with the variables it tells the reader to
set; secrets are read from standard input (``read -rs``), as the page shows, never given on a command line in the
container. Files move between machines as scp moves them (``docker cp`` through this machine stands for it): the
bytes and the source's mode, owned by the receiving login.

In page order: a PIN to be set is checked; the keys are made offline; on the source the in-use check names Apache,
which is stopped, the signing key is brought for the backup, the backup runs as root and the signing key is removed;
the archive, its manifest and signature go to the new host, which gets the crypto chapter's slot daemon and token
administrator; the secret backup key and the allowed signers file are brought, and the restore runs as root.
Outcome (the page's purpose): on the new host the token administrator logs in with the backup's user PIN, the token
holds the same key (the same public key as on the source) and it signs a message whose signature verifies with the
public key of the source's certificate; the source's token folder is byte for byte what it was, and its key still
signs. Negative: the same restore, given the allowed signers file of another signing key, refuses with a sentence
and restores nothing (the new host's token folder, its uninitialised token and its slot daemon as they were).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import urllib.request
import uuid
from pathlib import Path

import pytest

from checks.hosts import engine as eng
from checks.hosts.acme import booted
from checks.hosts.apache import TOKEN_KEY, serve_token
from checks.hosts.token import ADMIN, PINS
from checks.hosts.util import copy_to, ok, output

PAGE = "how-to/back-up-token"
PIN_STRENGTH, MAKE_KEY, IN_USE, BACKUP, RESTORE = (f"daytwo/{n}.sh" for n in (
    "check-pin-strength", "make-backup-key", "check-token-not-in-use", "back-up-token", "restore-token"))
START_SLOTD = "crypto/opencryptoki/start-pkcsslotd.sh"  # the crypto chapter's step 1, which the restore step names
ADD_USER = "crypto/pkcs11-group/add-user-to-pkcs11-group.sh"  # its token administrator step
KEEPER = "keeper"  # the ordinary login on the offline machine
KEY_FILE = "backup-key.txt"  # the page's example name: /root/backup-key.txt(.signing-key, .allowed_signers)
BACKUPS = "/var/backups/opencryptoki"  # the backup's BACKUP_DIR
STORE, FOLDER = "/var/lib/opencryptoki", "swtok"  # the Soft token's folder (amd64)
KEY = "apachekey"  # the key TOKEN_KEY made in the source's token
CERT = "/etc/ssl/certs/www.example.com.crt"  # its certificate
USER_PIN = PINS["TOKEN_USER_PIN"]
STRONG_PIN = "Tq7#mzR2"  # a PIN the reader means to set: 8 characters of all four kinds
DL = "dl"  # the folder in the login's home where the reader keeps what it downloaded

pytestmark = [pytest.mark.xdist_group("backup-walk"),
              pytest.mark.only_hosts("debian13-amd64",
                                     why="three containers, two of them booted with systemd, under qemu would take "
                                         "minutes; the round trip on the ICA token runs in "
                                         "checks/daytwo/test_back_up_token.py on s390x")]


def page_downloads(base_url: str) -> list[str]:
    """The snippet files the page's download links offer, in page order, each once."""
    with urllib.request.urlopen(f"{base_url}/{PAGE}.html", timeout=30) as got:
        html = got.read().decode()
    seen: list[str] = []
    for rel in re.findall(r'href="(?:\.\./)*_snippets/([^"]+)"', html):
        if rel not in seen:
            seen.append(rel)
    return seen


def download(base_url: str, rel: str, folder: Path) -> Path:
    dest = folder / Path(rel).name
    with urllib.request.urlopen(f"{base_url}/_snippets/{rel}", timeout=30) as got:
        dest.write_bytes(got.read())
    return dest


def home(user: str) -> str:
    return "/root" if user == "root" else f"/home/{user}"


def put_downloads(host, user: str, files: list[Path]) -> str:
    """The downloaded files in the login's ~/dl, its own (what a browser or curl leaves: mode 644)."""
    folder = f"{home(user)}/{DL}"
    ok(host, f"install -d -m 0700 -o {user} -g {user} {folder}")
    cli = eng.Engine.detect().cli
    for path in files:
        subprocess.run([cli, "cp", str(path), f"{host.zr_container}:{folder}/{path.name}"], check=True,
                       capture_output=True)
        ok(host, f"chown {user}: {folder}/{path.name} && chmod 644 {folder}/{path.name}")
    return folder


def login(host, user: str, script: str, stdin: str | None = None):
    """script in a login shell of user (su -, bash: the page's read -rs is bash's), as the reader runs a step; stdin
    (a PIN typed at read -rs) when given."""
    feed = f"printf '%s\\n' {shlex.quote(stdin)} | " if stdin is not None else ""
    return host.run(f"{feed}su - {user} -s /bin/bash -c {shlex.quote(script)}")


def scp(src, path: str, dst, dest: str, tmp: Path, user: str = "root") -> None:
    """scp of one file from src to dst: its bytes, and the source's mode on the new file, owned by the login user
    that receives it."""
    mode = ok(src, f"stat -c %a {shlex.quote(path)}").strip()
    local = tmp / uuid.uuid4().hex
    local.mkdir()
    cli = eng.Engine.detect().cli
    subprocess.run([cli, "cp", f"{src.zr_container}:{path}", str(local)], check=True, capture_output=True)
    (got,) = local.iterdir()
    subprocess.run([cli, "cp", str(got), f"{dst.zr_container}:{dest}"], check=True, capture_output=True)
    ok(dst, f"chown {user}: {shlex.quote(dest)} && chmod {mode} {shlex.quote(dest)}")


def token_files(host) -> str:
    """Every file and folder of the token folder: mode, owner:group, path; then each file's sha256."""
    return ok(host, f"cd {STORE} && find {FOLDER} -printf '%m %u:%g %p\\n' | sort"
                    f" && find {FOLDER} -type f -exec sha256sum {{}} + | sort -k2")


def as_admin(host, script: str):
    """A token tool as the token administrator (not root), the user PIN typed at read -rs."""
    module = "$(ls /usr/lib/*/opencryptoki/libopencryptoki.so.0 | head -n 1)"
    # pkcsconf is in /usr/sbin, which a login's PATH lacks; the Soft token's slot, or stop
    slot = ("slot=$(/usr/sbin/pkcsconf -t | awk '/^Token #/ { s = substr($2, 2) } /Model: *Soft/ { print s }');"
            " [ -n \"$slot\" ] || { echo 'no Soft token' >&2; exit 3; };")
    return login(host, ADMIN, f"set -o pipefail; read -rs PIN; module={module}; {slot} {script}", stdin=USER_PIN)


def public_key_sha256(host) -> str:
    """The sha256 of the public key object of KEY in the Soft token's slot, read by the token administrator."""
    said = as_admin(host, f"pkcs11-tool --module $module --slot $slot --login --pin \"$PIN\" --read-object"
                          f" --type pubkey --label {KEY} | sha256sum")
    assert said.rc == 0, output(said)
    return said.stdout.split()[0]


def signs(host, public_pem: str) -> None:
    """KEY signs a message (SHA-512 RSA, through pkcs11-tool as the token administrator), and the signature verifies
    with public_pem, the public key of the source's certificate."""
    copy_to(host, public_pem, "/tmp/source-public.pem")
    said = as_admin(host, f"cd /tmp && echo 'the token came back' > message"
                          f" && pkcs11-tool --module $module --slot $slot --login --pin \"$PIN\" --sign"
                          f" -m SHA512-RSA-PKCS --label {KEY} -i message -o signature"
                          f" && openssl dgst -sha512 -verify source-public.pem -signature signature message")
    assert said.rc == 0, output(said)
    assert "Verified OK" in said.stdout, output(said)


@pytest.fixture(params=["debian13-amd64"], ids=str)
def machines(request, zr_host_pool):
    """(offline, source, target): the key keeper's machine, the TOKEN_KEY host booted, a new host booted."""
    name = request.param
    offline = zr_host_pool.start(name)
    try:
        with booted(zr_host_pool, name) as source:
            target = zr_host_pool.start(name, boot=True)
            try:
                yield offline, source, target
            finally:
                zr_host_pool.remove(target)
    finally:
        zr_host_pool.remove(offline)


@pytest.mark.reader_walk("how-to/back-up-token")  # a literal: the coverage check reads it with ast
@pytest.mark.uses(START_SLOTD, ADD_USER)
@pytest.mark.snippet(PIN_STRENGTH, MAKE_KEY, IN_USE, BACKUP, RESTORE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_backup_page_from_the_site_s_downloads_moves_the_token_to_a_new_host(site, base_url, machines, tmp_path):
    offline, source, target = machines
    scripts = [rel for rel in page_downloads(base_url) if rel.endswith(".sh")]
    assert scripts == [PIN_STRENGTH, MAKE_KEY, IN_USE, BACKUP, RESTORE], scripts  # the page's order, walked below
    got = tmp_path / "downloads"
    got.mkdir()
    files = {rel: download(base_url, rel, got) for rel in (*scripts, START_SLOTD, ADD_USER)}

    # Before the walk: the source serves the Apache page's site from its token.
    serve_token(source)
    before = token_files(source)
    public_pem = ok(source, f"openssl x509 -in {CERT} -noout -pubkey")
    source_key = public_key_sha256(source)

    # "Why a copy of the folder is attacked offline": the PIN the reader means to set, checked before it is set.
    root_dl = put_downloads(source, "root", [files[PIN_STRENGTH], files[IN_USE], files[BACKUP]])
    checked = login(source, "root", f"read -rs NEW_TOKEN_USER_PIN; export NEW_TOKEN_USER_PIN;"
                                    f" bash {root_dl}/check-pin-strength.sh NEW_TOKEN_USER_PIN", stdin=STRONG_PIN)
    assert checked.rc == 0, output(checked)
    weak = login(source, "root", f"read -rs NEW_TOKEN_USER_PIN; export NEW_TOKEN_USER_PIN;"
                                 f" bash {root_dl}/check-pin-strength.sh NEW_TOKEN_USER_PIN", stdin=USER_PIN)
    assert weak.rc != 0, output(weak)  # the runbook's test PIN is digits alone: test data, as the page says

    # 1. Make the backup keys, offline: an ordinary login on the machine that keeps them.
    ok(offline, f"useradd -m -s /bin/bash {KEEPER}")
    keeper_dl = put_downloads(offline, KEEPER, [files[MAKE_KEY]])
    made = login(offline, KEEPER, f"bash {keeper_dl}/make-backup-key.sh ~/{KEY_FILE}")
    assert made.rc == 0, output(made)
    print(f"\n$ make-backup-key.sh ~/{KEY_FILE}\n{made.stdout}{made.stderr}")
    recipient = made.stdout.splitlines()[-1]
    assert re.fullmatch(r"BACKUP_RECIPIENT=age1[0-9a-z]{58}", recipient), output(made)
    keys = f"{home(KEEPER)}/{KEY_FILE}"

    # 2. Back up the token, on the source, as root.
    in_use = login(source, "root", f"bash {root_dl}/check-token-not-in-use.sh")
    assert in_use.rc == 1, output(in_use)
    assert "(apache2)" in in_use.stderr, output(in_use)
    ok(source, "systemctl stop apache2")  # "Stop the services that use the token first"
    free = login(source, "root", f"bash {root_dl}/check-token-not-in-use.sh")
    assert free.rc == 0, output(free)
    assert free.stdout.startswith("No process uses the token"), output(free)
    scp(offline, f"{keys}.signing-key", source, f"/root/{KEY_FILE}.signing-key", tmp_path)  # brought for the backup
    backed_up = login(source, "root", f"export {recipient}; export BACKUP_SIGNING_KEY=/root/{KEY_FILE}.signing-key;"
                                      f" bash {root_dl}/back-up-token.sh {BACKUPS}")
    assert backed_up.rc == 0, output(backed_up)
    print(f"$ back-up-token.sh {BACKUPS}\n{backed_up.stdout}")
    ok(source, f"rm /root/{KEY_FILE}.signing-key")  # "Remove the signing key from the host when the backup is done"
    assert token_files(source) == before, "the backup changed the source's token folder"
    archive = ok(source, f"ls {BACKUPS}/*.tar.gz.age").strip()
    stem = archive.removesuffix(".tar.gz.age")

    # "Copy the archive, its manifest and the manifest's .sig ... to the host you restore to."
    ok(target, "install -d -m 0700 /root/restore")
    for path in (archive, f"{stem}.manifest", f"{stem}.manifest.sig"):
        scp(source, path, target, f"/root/restore/{Path(path).name}", tmp_path)
    carried = f"/root/restore/{Path(archive).name}"

    # 3. Restore the token on the new host: openCryptoki's slot daemon (the crypto chapter's step 1), the secret
    # backup key (root's, mode 600) and the allowed signers file (root's, mode 644) brought, then the restore as root.
    target_dl = put_downloads(target, "root", [files[START_SLOTD], files[ADD_USER], files[IN_USE], files[RESTORE]])
    started = login(target, "root", f"bash {target_dl}/start-pkcsslotd.sh")
    assert started.rc == 0, output(started)
    ok(target, f"useradd -m {ADMIN}")  # the token administrator (the crypto chapter's step 2): a new host has only root
    added = login(target, "root", f"bash {target_dl}/add-user-to-pkcs11-group.sh {ADMIN}")
    assert added.rc == 0, output(added)
    scp(offline, keys, target, f"/root/{KEY_FILE}", tmp_path)
    scp(offline, f"{keys}.allowed_signers", target, f"/root/{KEY_FILE}.allowed_signers", tmp_path)
    assert ok(target, f"stat -c '%U %a' /root/{KEY_FILE} /root/{KEY_FILE}.allowed_signers").split() == \
        ["root", "600", "root", "644"]
    restore = (f"read -rs TOKEN_USER_PIN; export TOKEN_USER_PIN; export TOKEN_ADMIN={ADMIN};"
               f" bash {target_dl}/restore-token.sh {carried} /root/{KEY_FILE} {{allowed}}")

    # The negative first, on the untouched new host: the allowed signers file of another signing key.
    other = login(offline, KEEPER, f"bash {keeper_dl}/make-backup-key.sh ~/other-key.txt")
    assert other.rc == 0, output(other)
    scp(offline, f"{home(KEEPER)}/other-key.txt.allowed_signers", target, "/root/other.allowed_signers", tmp_path)
    empty = ok(target, f"cd {STORE} && find . -printf '%m %u:%g %p\\n' | sort")
    refused = login(target, "root", restore.format(allowed="/root/other.allowed_signers"), stdin=USER_PIN)
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"Refused: {carried.removesuffix('.tar.gz.age')}.manifest is not signed by the"
                                     " backup's signing key"), output(refused)
    assert refused.stderr.rstrip().endswith("Nothing was changed."), output(refused)
    assert ok(target, f"cd {STORE} && find . -printf '%m %u:%g %p\\n' | sort") == empty, "the refused restore wrote"
    assert ok(target, "systemctl is-active pkcsslotd").strip() == "active"
    flags = ok(target, "pkcsconf -t")
    assert "TOKEN_INITIALIZED" not in flags, flags

    restored = login(target, "root", restore.format(allowed=f"/root/{KEY_FILE}.allowed_signers"), stdin=USER_PIN)
    assert restored.rc == 0, output(restored)
    print(f"$ restore-token.sh {carried} /root/{KEY_FILE} /root/{KEY_FILE}.allowed_signers\n{restored.stdout}")
    ok(target, f"rm /root/{KEY_FILE}")  # "remove it when the restore is done"

    # The page's purpose: the same token, the same key, with the same PIN, on the new host; the source's as it was.
    assert token_files(target) == before, "the restored folder differs from the source's"
    assert public_key_sha256(target) == source_key
    signs(target, public_pem)
    assert token_files(source) == before, "the source's token folder changed"
    signs(source, public_pem)
