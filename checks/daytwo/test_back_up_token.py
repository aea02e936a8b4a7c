"""Day two, backing up a token and restoring it on another host (docs/how-to/back-up-token.md).

The source is the Apache token site's prepared host (checks/hosts/apache.py TOKEN_KEY: the token initialised, its
folder opened to the pkcs11 group, the key ``apachekey`` made in it, never extractable). back-up-token.sh archives
the token folder there; the archive and its manifest are carried to a second, fresh container of the same host
image (``zr_host_pool.start``), whose slot daemon runs and has already served its own, uninitialised token (so its
shared memory describes that token); restore-token.sh puts the folder in place there.
Outcome: on the new host the same key signs with the same user PIN (pkcs11-tool, the signature verified with the
public key of the source's certificate), its attributes are those it had (``p11sak list-key --long``, every line,
CKA_SENSITIVE true and CKA_EXTRACTABLE false among them), both halves of the key pair are listed, and every file has
the owner, group, mode and bytes it had. Negatives: an archive without MK_SO and MK_USER is refused with a sentence
and the new host's token folder, daemon and token stay as they were; a token that holds keys is not replaced without
REPLACE=yes. And why the restore removes the token's shared memory: a folder copied in by hand while that memory
still describes the old token hides the restored public key.

The store is the same code on both architectures (openCryptoki's common loadsave.c), in the ICA token's folder
``lite`` on s390x and the Soft token's ``swtok`` elsewhere: the round trip runs on both hosts, the rest on amd64.
The folders the scripts know are those of facts/crypto/token-store.csv, and the restore accepts exactly the tokens
whose keys that table calls clear keys (a test without a host).
"""

from __future__ import annotations

import base64
import re
import shlex

import pytest

from checks.hosts.apache import TOKEN_KEY, serve_token
from checks.hosts.steps import arch, snippet_path, start_pkcsslotd, stop_pkcsslotd
from checks.hosts.token import PINS, slot_of
from checks.hosts.util import copy_to, ok, output
from zrunbook import SNIPPETS, facts
from zrunbook.shown_output import assert_shown_output, normalise_common

BACKUP = "daytwo/back-up-token.sh"
RESTORE = "daytwo/restore-token.sh"
IN_USE = "daytwo/check-token-not-in-use.sh"  # both scripts run it first
BACKED_UP, RESTORED, REFUSED = ("daytwo/back-up-token.out", "daytwo/restore-token.out",
                                 "daytwo/restore-token.refused.out")  # what the page shows, from amd64
BACKUPS = "/var/backups/opencryptoki"
STORE = "/var/lib/opencryptoki"
TABLE = "crypto/token-store"  # the token folders, their libraries and what a copy brings back (the page shows it)
_FOLDERS = {row["token"]: row["folder"] for row in facts.table(TABLE)}
FOLDER = {"amd64": _FOLDERS["Soft"], "s390x": _FOLDERS["ICA"]}  # swtok, lite
KEY = "apachekey"  # the key TOKEN_KEY made
CERT = "/etc/ssl/certs/www.example.com.crt"  # its certificate, from the page's test CA
USER_PIN = PINS["TOKEN_USER_PIN"]


@pytest.fixture
def target(fresh_host, zr_host_pool):
    """A second new container of the same host image, its slot daemon running and its uninitialised token read once
    (pkcsconf -t): a host that has used openCryptoki before the restore."""
    host = zr_host_pool.start(fresh_host.zr_name)
    try:
        start_pkcsslotd(host)
        ok(host, "pkcsconf -t >/dev/null")
        yield host
    finally:
        zr_host_pool.remove(host)


def back_up(host) -> tuple[str, str]:
    """back-up-token.sh on host; returns the archive's path (its manifest beside it) and what the script said."""
    done = host.run(f"bash {snippet_path(BACKUP)} {BACKUPS}")
    assert done.rc == 0, output(done)
    print(f"\n$ back-up-token.sh {BACKUPS}\n{done.stdout}")
    return ok(host, f"ls {BACKUPS}/*.tar.gz").strip(), done.stdout


def shown(text: str) -> str:
    """The shown output as the page has it: times normalised, the archive's time stamp too."""
    return normalise_common(re.sub(r"\b\d{8}T\d{6}Z\b", "<time>", text))


def carry(source, target, archive: str, name: str | None = None) -> str:
    """Copy the archive and its manifest from source to target (under /root/restore), as name when given."""
    name = name or archive.rsplit("/", 1)[1]
    for src, suffix in ((archive, ".tar.gz"), (archive.removesuffix(".tar.gz") + ".manifest", ".manifest")):
        data = base64.b64decode(ok(source, f"base64 -w0 {shlex.quote(src)}"))
        copy_to(target, data, f"/root/restore/{name.removesuffix('.tar.gz')}{suffix}")
    return f"/root/restore/{name}"


def files(host, folder: str) -> str:
    """Every file and folder of the token folder: mode, owner:group and path; then each file's sha256."""
    return ok(host, f"cd {STORE} && find {folder} -printf '%m %u:%g %p\\n' | sort"
                    f" && find {folder} -type f -exec sha256sum {{}} + | sort -k2")


def key_attributes(host, slot: str) -> str:
    return ok(host, f"PKCS11_USER_PIN={USER_PIN} p11sak list-key all --slot {slot} --label {KEY} --long")


def sign(host, slot: str, pin: str = USER_PIN):
    """A SHA-512 RSA signature of /tmp/message with the token's key, through pkcs11-tool (OpenSC)."""
    host.run("echo 'day two: the restored key signs' > /tmp/message")
    module = ok(host, "ls /usr/lib/*/opencryptoki/libopencryptoki.so.0").split()[0]
    return host.run(f"pkcs11-tool --module {module} --slot {slot} --login --pin {shlex.quote(pin)} --sign"
                    f" -m SHA512-RSA-PKCS --label {KEY} -i /tmp/message -o /tmp/signature 2>&1")


@pytest.mark.snippet(BACKUP, RESTORE, IN_USE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.arch_dependent("the ICA token's store (lite, libica signs) on s390x, the Soft token's (swtok) elsewhere")
def test_a_restored_token_signs_on_a_new_host_with_the_same_pin_and_the_same_attributes(fresh_host, target):
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    slot = slot_of(source)
    before_attributes = key_attributes(source, slot)
    before_files = files(source, folder)
    public = ok(source, f"openssl x509 -in {CERT} -noout -pubkey")
    archive, _said = back_up(source)
    assert source.run("test -S /run/opencryptoki/pkcsslotd.socket && pkcsconf -s >/dev/null").rc == 0, \
        "the backup did not start the slot daemon again"
    assert ok(source, f"stat -c '%a %U' {archive}").split() == ["600", "root"]

    carried = carry(source, target, archive)
    assert target.run(f"test -e {STORE}/{folder}/MK_USER").rc == 1, "the new host's token already has a user PIN"
    restored = target.run(f"TOKEN_USER_PIN={USER_PIN} bash {snippet_path(RESTORE)} {carried}")
    assert restored.rc == 0, output(restored)
    print(f"$ TOKEN_USER_PIN=... restore-token.sh {carried}\n{restored.stdout}")
    assert restored.stdout.count(f'"{KEY}"') == 2, output(restored)  # its listing after the login: both halves

    assert files(target, folder) == before_files
    target_slot = slot_of(target)
    after_attributes = key_attributes(target, target_slot)
    print(f"$ p11sak list-key all --slot {target_slot} --label {KEY} --long   (new host, attributes)\n"
          + "\n".join(line for line in after_attributes.splitlines()
                      if "Label" in line or "Key:" in line or "SENSITIVE" in line or "EXTRACTABLE" in line))
    assert after_attributes == before_attributes
    private = after_attributes.split("Key: public")[0]
    for attribute in ("CKA_SENSITIVE: CK_TRUE", "CKA_ALWAYS_SENSITIVE: CK_TRUE", "CKA_EXTRACTABLE: CK_FALSE",
                      "CKA_NEVER_EXTRACTABLE: CK_TRUE"):
        assert attribute in private, private
    assert after_attributes.count(f'Label: "{KEY}"') == 2, "both halves of the key pair are listed"

    signed = sign(target, target_slot)
    assert signed.rc == 0, output(signed)
    copy_to(target, public, "/tmp/source-public.pem")
    verified = ok(target, "openssl dgst -sha512 -verify /tmp/source-public.pem -signature /tmp/signature /tmp/message")
    print(f"$ pkcs11-tool ... --sign -m SHA512-RSA-PKCS --label {KEY}; openssl dgst -sha512 -verify <source's"
          f" certificate's key>\n{verified}")
    assert verified.strip() == "Verified OK"


@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.snippet(REFUSED, checker="output-regenerated")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64")
def test_an_archive_without_the_master_key_files_is_refused_and_the_new_host_stays_as_it_was(fresh_host, target):
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    archive, _said = back_up(source)
    # the archive as a backup that copied only NVTOK.DAT and TOK_OBJ/ would have it, its manifest beside it
    broken = "/tmp/broken/no-master-key.tar.gz"
    ok(source, f"mkdir -p /tmp/broken/x && tar -xpzf {archive} -C /tmp/broken/x && rm /tmp/broken/x/{folder}/MK_*"
               f" && tar -czpf {broken} -C /tmp/broken/x {folder}"
               f" && cp {archive.removesuffix('.tar.gz')}.manifest /tmp/broken/no-master-key.manifest")
    carried = carry(source, target, broken)

    def state() -> str:
        return (files(target, ".") + ok(target, "cat /run/opencryptoki/pkcsslotd.pid")
                + ok(target, f"pkcsconf -t -c {slot_of(target)} | grep -E 'Label|Flags'"))

    before = state()
    refused = target.run(f"bash {snippet_path(RESTORE)} {carried}")
    print(f"\n$ restore-token.sh {carried}\n{refused.stderr}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"Refused: {carried} lacks MK_SO MK_USER of token folder {folder}."), \
        output(refused)
    assert refused.stderr.rstrip().endswith("Nothing was changed."), output(refused)
    assert refused.stdout == "", output(refused)
    assert "line " not in refused.stderr, output(refused)  # no bash error, only the sentence
    assert state() == before
    assert "softtok" in before  # the new host's own token, still uninitialised
    assert_shown_output(REFUSED, refused.stderr, shown)


@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.snippet(BACKED_UP, RESTORED, checker="output-regenerated")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64")
def test_a_token_that_holds_keys_is_replaced_only_with_replace_yes(fresh_host):
    host, folder = fresh_host, FOLDER[arch(fresh_host)]
    archive, said = back_up(host)
    assert_shown_output(BACKED_UP, said, shown)
    before = files(host, folder)
    kept = host.run(f"bash {snippet_path(RESTORE)} {archive}")
    assert kept.rc == 1, output(kept)
    assert f"{STORE}/{folder} holds a token with a user PIN or keys. Set REPLACE=yes" in kept.stderr, output(kept)
    assert files(host, folder) == before
    replaced = host.run(f"REPLACE=yes TOKEN_USER_PIN={USER_PIN} bash {snippet_path(RESTORE)} {archive}")
    assert replaced.rc == 0, output(replaced)
    assert_shown_output(RESTORED, replaced.stdout, shown)
    assert files(host, folder) == before
    assert ok(host, f"ls -d {STORE}/{folder}.before-restore-*").count("before-restore") == 1
    assert sign(host, slot_of(host)).rc == 0


OLD_FORMAT_SLOT = "sed -i '/libpkcs11_sw.so/{n;/tokversion/d}' /etc/opencryptoki/opencryptoki.conf"  # amd64's Soft


@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64")
def test_a_slot_that_reads_the_old_store_format_is_refused_and_nothing_changes(fresh_host, target):
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    carried = carry(source, target, back_up(source)[0])
    ok(target, OLD_FORMAT_SLOT)
    before = files(target, ".")
    refused = target.run(f"bash {snippet_path(RESTORE)} {carried}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"Refused: the archive holds the 3.12 store format, but slot {slot_of(target)} in"
                                     " /etc/opencryptoki/opencryptoki.conf lacks 'tokversion = 3.12'."), output(refused)
    assert files(target, ".") == before
    assert target.run(f"test -e {STORE}/{folder}/MK_USER").rc == 1


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64")
def test_a_3_12_store_in_a_slot_without_tokversion_reads_as_a_locked_token(fresh_host, target):
    """Why the restore compares the store format with the slot's tokversion: a slot without the line reads the folder
    in the old format, and the token then shows nonsense flags and refuses the right PIN."""
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    archive = carry(source, target, back_up(source)[0])
    ok(target, OLD_FORMAT_SLOT)
    stop_pkcsslotd(target)
    ok(target, f"rm -rf {STORE}/{folder} /dev/shm/var.lib.opencryptoki.{folder} && tar -xpzf {archive} -C {STORE}"
               " && pkcsslotd")
    slot = slot_of(target)
    flags = ok(target, f"pkcsconf -t -c {slot} | grep Flags")
    login = target.run(f"PKCS11_USER_PIN={USER_PIN} p11sak list-key all --slot {slot}")
    print(f"\n{flags}{output(login)}")
    assert "TOKEN_INITIALIZED" not in flags, flags
    assert login.rc != 0, output(login)
    assert "CKR_PIN_LOCKED" in login.stdout + login.stderr, output(login)


@pytest.mark.snippet(BACKUP, IN_USE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64")
def test_a_token_that_httpd_uses_is_not_copied_until_httpd_stops(fresh_host):
    host, folder = fresh_host, FOLDER[arch(fresh_host)]
    serve_token(host)
    daemon = ok(host, "cat /run/opencryptoki/pkcsslotd.pid")
    refused = host.run(f"bash {snippet_path(BACKUP)} {BACKUPS}")
    print(f"\n$ back-up-token.sh {BACKUPS}   (httpd serving with the token's key)\n{refused.stderr}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"The token in {STORE}/{folder} is in use by process "), output(refused)
    assert "(apache2)" in refused.stderr, output(refused)
    assert refused.stderr.rstrip().endswith("Nothing was copied."), output(refused)
    assert host.run(f"ls {BACKUPS}/*.tar.gz").rc != 0, "an archive was written"
    assert ok(host, "cat /run/opencryptoki/pkcsslotd.pid") == daemon  # the slot daemon was not touched
    ok(host, "apachectl stop; for i in $(seq 50); do pgrep -x apache2 >/dev/null || break; sleep 0.2; done")
    free = host.run(f"bash {snippet_path(IN_USE)}")
    assert free.stdout == f"No process uses the token in {STORE}/{folder}.\n", output(free)
    assert host.run(f"bash {snippet_path(BACKUP)} {BACKUPS}").rc == 0


@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64")
def test_a_token_folder_copied_in_while_its_shared_memory_remains_hides_the_public_key(fresh_host, target):
    """Why restore-token.sh removes /dev/shm/var.lib.opencryptoki.<folder>: openCryptoki keeps an index of the
    token's objects there, and a process that finds it already filled does not add the restored public objects."""
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    archive = carry(source, target, back_up(source)[0])
    stop_pkcsslotd(target)
    ok(target, f"rm -rf {STORE}/{folder} && tar -xpzf {archive} -C {STORE} && pkcsslotd")
    by_hand = key_attributes(target, slot_of(target))
    assert by_hand.count(f'Label: "{KEY}"') == 1, by_hand
    assert "Key: private RSA" in by_hand, by_hand
    stop_pkcsslotd(target)
    ok(target, f"rm /dev/shm/var.lib.opencryptoki.{folder} && pkcsslotd")
    assert key_attributes(target, slot_of(target)).count(f'Label: "{KEY}"') == 2


def test_the_scripts_know_the_token_folders_of_the_facts_table():
    rows = facts.table(TABLE)
    restore = (SNIPPETS / RESTORE).read_text(encoding="utf-8")
    backup = (SNIPPETS / BACKUP).read_text(encoding="utf-8")
    assert dict(re.findall(r'stdll == "(libpkcs11_\w+\.so)"\) name = "([\w-]+)"', restore)) == \
        {row["stdll"]: row["folder"] for row in rows}
    accepted = re.search(r"^case \$stdll in\n\s*([^)]+)\)", restore, re.M).group(1).split(" | ")
    assert sorted(accepted) == sorted(row["stdll"] for row in rows if row["keys"].startswith("clear keys"))
    defaults = re.search(r"== s390x \]\]; then default_dir=(\w+); else default_dir=(\w+);", backup).groups()
    folder = {row["token"]: row["folder"] for row in rows}
    assert defaults == (folder["ICA"], folder["Soft"])
