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

The archive is encrypted with age to a backup key made by make-backup-key.sh (here on the source host, standing in
for the offline machine); the restore takes its identity file. Without the key the archive is not a gzip or a tar
and age does not open it; with another key the restore refuses with a sentence and changes nothing; without a
recipient or a signing key the backup writes nothing. The manifest is signed with the signing key make-backup-key.sh
made beside the backup key (ssh-keygen -Y sign), and the restore checks it with the allowed signers file before it
decrypts anything: an archive and a manifest forged with the public recipient alone (age authenticates no sender)
are refused, and so are a genuine signed manifest beside another archive, a manifest signed by another key or in
another namespace, and an allowed signers file others may change. The negative case
checks/daytwo/bad/restore-token-trusts-unsigned-manifest.sh (the restore before the signature) unpacks the forgery.
A symbolic link or a FIFO a pkcs11 member plants in the token folder makes the backup refuse, and an archive holding
a symbolic link makes the restore refuse. The negative case
checks/daytwo/bad/back-up-token-plain-and-follows-links.sh (the script before the change) fails both checks: its
archive opens without a key, and as root it hashed the root-only file a planted link points to.
check-pin-strength.sh: an 8-digit PIN, a short one and one of two kinds of characters fail; a mixed one passes.

The store is the same code on both architectures (openCryptoki's common loadsave.c), in the ICA token's folder
``lite`` on s390x and the Soft token's ``swtok`` elsewhere: the round trip runs on both hosts, the rest on amd64.
The folders the scripts know are those of facts/crypto/token-store.csv, and the restore accepts exactly the tokens
whose keys that table calls clear keys (a test without a host).
"""

from __future__ import annotations

import base64
import re
import shlex
from pathlib import Path

import pytest

from checks.hosts.apache import TOKEN_KEY, serve_token
from checks.hosts.steps import arch, snippet_path, start_pkcsslotd, stop_pkcsslotd
from checks.hosts.token import ADMIN, PINS, slot_of, token_admin
from checks.hosts.util import copy_to, ok, output
from zrunbook import SNIPPETS, facts
from zrunbook.shown_output import assert_shown_output, normalise_common

BACKUP = "daytwo/back-up-token.sh"
RESTORE = "daytwo/restore-token.sh"
IN_USE = "daytwo/check-token-not-in-use.sh"  # both scripts run it first
MAKE_KEY = "daytwo/make-backup-key.sh"
PIN_STRENGTH = "daytwo/check-pin-strength.sh"
# the negative case: the script before, whose archive was plain and which followed planted links
OLD_BACKUP = Path(__file__).resolve().parent / "bad/back-up-token-plain-and-follows-links.sh"
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
KEY_FILE = "/root/backup-key.txt"  # the secret backup key: on the offline machine, and brought for a restore only
SIGNING_KEY = f"{KEY_FILE}.signing-key"  # make-backup-key.sh's signing key: offline too, brought for a backup only
ALLOWED = f"{KEY_FILE}.allowed_signers"  # its public key, which the restore checks the manifest's signature with
NAMESPACE = "zrunbook-token-backup"
# the negative case: the restore before the signature, which trusted the plain manifest
OLD_RESTORE = Path(__file__).resolve().parent / "bad/restore-token-trusts-unsigned-manifest.sh"
FINGERPRINT = re.compile(r"\bSHA256:[A-Za-z0-9+/]{43}")
RECIPIENT = re.compile(r"\bage1[0-9a-z]{58}\b")


def make_key(host, path: str = KEY_FILE) -> str:
    """make-backup-key.sh on host; returns the recipient (the public key) it prints."""
    made = host.run(f"bash {snippet_path(MAKE_KEY)} {path}")
    assert made.rc == 0, output(made)
    line = made.stdout.splitlines()[-1]
    assert line.startswith("BACKUP_RECIPIENT=age1"), output(made)
    assert ok(host, f"stat -c %a {path}").strip() == "600"
    assert ok(host, f"stat -c %a {path}.signing-key").strip() == "600"
    allowed = ok(host, f"cat {path}.allowed_signers")
    assert re.fullmatch(rf'token-backup namespaces="{NAMESPACE}" ssh-ed25519 [A-Za-z0-9+/=]+\n', allowed), allowed
    assert host.run(f"test -e {path}.signing-key.pub").rc == 1, "the public key file was left beside the keys"
    return line.split("=", 1)[1]


def encrypted(host, archive: str) -> list[str]:
    """Why the archive is readable without the key (empty when it is not): age's header, no gzip, no tar."""
    found = []
    if host.run(f"head -c 22 {shlex.quote(archive)} | grep -qx 'age-encryption.org/v1'").rc != 0:
        found.append("it does not start with age's header")
    if host.run(f"gzip -t {shlex.quote(archive)}").rc == 0:
        found.append("gzip reads it")
    if host.run(f"tar -tzf {shlex.quote(archive)}").rc == 0 or host.run(f"tar -tf {shlex.quote(archive)}").rc == 0:
        found.append("tar lists it")
    return found


@pytest.fixture
def target(fresh_host, zr_host_pool):
    """A second new container of the same host image, its slot daemon running and its uninitialised token read once
    (pkcsconf -t): a host that has used openCryptoki before the restore."""
    host = zr_host_pool.start(fresh_host.zr_name)
    try:
        start_pkcsslotd(host)
        token_admin(host)  # the crypto page's token administrator, as whom the restore runs its token tools
        ok(host, "pkcsconf -t >/dev/null")
        yield host
    finally:
        zr_host_pool.remove(host)


def back_up(host, recipient: str | None = None) -> tuple[str, str]:
    """back-up-token.sh on host to recipient (a new backup key on host when None), signed with SIGNING_KEY; returns
    the archive's path (its manifest and the manifest's signature beside it) and what the script said."""
    recipient = recipient or make_key(host)
    done = host.run(f"BACKUP_RECIPIENT={recipient} BACKUP_SIGNING_KEY={SIGNING_KEY} bash {snippet_path(BACKUP)}"
                    f" {BACKUPS}")
    assert done.rc == 0, output(done)
    print(f"\n$ BACKUP_RECIPIENT={recipient} BACKUP_SIGNING_KEY={SIGNING_KEY} back-up-token.sh {BACKUPS}\n"
          f"{done.stdout}")
    names = ok(host, f"ls -A {BACKUPS}").split()
    assert len(names) == 3, f"not the archive, the manifest and its signature: {names}"
    assert all(n.endswith((".tar.gz.age", ".manifest", ".manifest.sig")) for n in names), names
    return ok(host, f"ls {BACKUPS}/*.tar.gz.age").strip(), done.stdout


def sign_manifest(host, manifest: str, key: str = SIGNING_KEY, namespace: str = NAMESPACE) -> None:
    """Sign manifest with key as back-up-token.sh does (manifest.sig beside it)."""
    ok(host, f"rm -f {manifest}.sig && ssh-keygen -Y sign -q -f {key} -n {namespace} {manifest} </dev/null")


def shown(text: str) -> str:
    """The shown output as the page has it: times normalised, the archive's time stamp too, and the keys."""
    text = FINGERPRINT.sub("SHA256:<fingerprint>", RECIPIENT.sub("age1<recipient>", text))
    return normalise_common(re.sub(r"\b\d{8}T\d{6}Z\b", "<time>", text))


def carry(source, target, archive: str, name: str | None = None) -> str:
    """Copy the archive, its manifest and the manifest's signature (when there is one) from source to target (under
    /root/restore), as name when given; and the backup key, as the reader brings it for the restore (mode 600), and
    the allowed signers file (mode 644)."""
    name = name or archive.rsplit("/", 1)[1]
    stem = archive.removesuffix(".tar.gz.age")
    for src, suffix in ((archive, ".tar.gz.age"), (f"{stem}.manifest", ".manifest"),
                        (f"{stem}.manifest.sig", ".manifest.sig")):
        if suffix == ".manifest.sig" and source.run(f"test -e {shlex.quote(src)}").rc != 0:
            continue
        data = base64.b64decode(ok(source, f"base64 -w0 {shlex.quote(src)}"))
        copy_to(target, data, f"/root/restore/{name.removesuffix('.tar.gz.age')}{suffix}")
    if source is not target:
        copy_to(target, ok(source, f"cat {KEY_FILE}"), KEY_FILE)
        copy_to(target, ok(source, f"cat {ALLOWED}"), ALLOWED)
        ok(target, f"chmod 600 {KEY_FILE} && chmod 644 {ALLOWED}")
    return f"/root/restore/{name}"


def repack(host, archive: str, out: str, change: str, recipient: str) -> str:
    """A copy of archive (decrypted with KEY_FILE into /tmp/repack) changed by the shell command change there, packed
    and encrypted again to recipient as out, with the manifest's archive-sha256 made to match and the manifest signed
    with SIGNING_KEY: what a backup that made such a folder would have written."""
    ok(host, f"rm -rf /tmp/repack && mkdir -p /tmp/repack {shlex.quote(out.rsplit('/', 1)[0])}"
             f" && age -d -i {KEY_FILE} {archive} | tar -xpz -C /tmp/repack"
             f" && (cd /tmp/repack && {change})"
             f" && tar -czp -C /tmp/repack $(ls /tmp/repack) | age -r {recipient} -o {out}"
             f" && sed 's/^archive-sha256: .*/archive-sha256: '$(sha256sum {out} | cut -d' ' -f1)/"
             f" {archive.removesuffix('.tar.gz.age')}.manifest > {out.removesuffix('.tar.gz.age')}.manifest")
    sign_manifest(host, f"{out.removesuffix('.tar.gz.age')}.manifest")
    return out


FORGED_FILE = "TOK_OBJ/FORGED00.TOK"  # what the forger adds, so that a restored forgery shows


def forge(host, archive: str, recipient: str, out: str) -> str:
    """What someone who may write to the backup store makes with the public recipient alone (every manifest names
    it): a token folder of their choosing (here the host's token folder with one object file added, standing for a
    token whose PINs they know), packed and encrypted to the recipient with age as out, and a manifest to match, made
    from archive's genuine one. Neither the backup key nor the signing key is used; no signature is written."""
    folder = FOLDER[arch(host)]
    work, forged = "/tmp/forge", f"/tmp/forge/{folder}/{FORGED_FILE}"
    ok(host, f"rm -rf {work} && mkdir -p {work} {shlex.quote(out.rsplit('/', 1)[0])}"
             f" && cp -a {STORE}/{folder} {work}/ && echo forged > {forged}"
             f" && chown root:pkcs11 {forged} && chmod 660 {forged}"
             f" && tar -czp -C {work} {folder} | age -r {recipient} -o {shlex.quote(out)}")
    digest, added = ok(host, f"sha256sum {shlex.quote(out)} {forged}").split()[0::2]
    manifest = re.sub(r"^archive-sha256: .*$", f"archive-sha256: {digest}",
                      ok(host, f"cat {archive.removesuffix('.tar.gz.age')}.manifest"), flags=re.M)
    copy_to(host, f"{manifest}{added} 660 root:pkcs11 {folder}/{FORGED_FILE}\n",
            f"{out.removesuffix('.tar.gz.age')}.manifest")
    return out


def assert_refused(result, sentence: str) -> None:
    """The restore refused with sentence, said that nothing was changed, and printed no secret and no bash error."""
    assert result.rc == 1, output(result)
    assert result.stderr.startswith(sentence), output(result)
    assert result.stderr.rstrip().endswith("Nothing was changed."), output(result)
    assert result.stdout == "", output(result)
    assert "AGE-SECRET-KEY-" not in result.stderr, "the secret key was printed"
    assert "line " not in result.stderr, output(result)


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


@pytest.mark.snippet(BACKUP, RESTORE, IN_USE, MAKE_KEY, checker="testinfra")
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
    assert encrypted(target, carried) == []
    restored = target.run(f"TOKEN_USER_PIN={USER_PIN} TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)}"
                          f" {carried} {KEY_FILE} {ALLOWED}")
    assert restored.rc == 0, output(restored)
    print(f"$ TOKEN_USER_PIN=... restore-token.sh {carried} {KEY_FILE} {ALLOWED}\n{restored.stdout}")
    assert ok(target, f"stat -c '%a %U:%G' {STORE}").split() == ["770", "root:pkcs11"], "the store was not opened again"
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


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.negative("daytwo/restore-token.sh",
                      expects="the restore refuses an archive without the master key files and changes nothing")
@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.snippet(REFUSED, checker="output-regenerated")
@pytest.mark.from_state(TOKEN_KEY)
def test_an_archive_without_the_master_key_files_is_refused_and_the_new_host_stays_as_it_was(fresh_host, target):
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    recipient = make_key(source)
    archive, _said = back_up(source, recipient)
    # the archive as a backup that copied only NVTOK.DAT and TOK_OBJ/ would have it, its manifest beside it
    broken = repack(source, archive, "/tmp/broken/no-master-key.tar.gz.age", f"rm {folder}/MK_*", recipient)
    carried = carry(source, target, broken)

    def state() -> str:
        return (files(target, ".") + ok(target, "cat /run/opencryptoki/pkcsslotd.pid")
                + ok(target, f"pkcsconf -t -c {slot_of(target)} | grep -E 'Label|Flags'"))

    before = state()
    refused = target.run(f"TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {carried} {KEY_FILE} {ALLOWED}")
    print(f"\n$ restore-token.sh {carried} {KEY_FILE} {ALLOWED}\n{refused.stderr}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"Refused: {carried} lacks MK_SO MK_USER of token folder {folder}."), \
        output(refused)
    assert refused.stderr.rstrip().endswith("Nothing was changed."), output(refused)
    assert refused.stdout == "", output(refused)
    assert "line " not in refused.stderr, output(refused)  # no bash error, only the sentence
    assert state() == before
    assert "softtok" in before  # the new host's own token, still uninitialised
    assert_shown_output(REFUSED, refused.stderr, shown)


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.snippet(BACKED_UP, RESTORED, checker="output-regenerated")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_token_that_holds_keys_is_replaced_only_with_replace_yes(fresh_host):
    host, folder = fresh_host, FOLDER[arch(fresh_host)]
    archive, said = back_up(host)
    assert_shown_output(BACKED_UP, said, shown)
    before = files(host, folder)
    kept = host.run(f"TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {archive} {KEY_FILE} {ALLOWED}")
    assert kept.rc == 1, output(kept)
    assert f"{STORE}/{folder} holds a token with a user PIN or keys. Set REPLACE=yes" in kept.stderr, output(kept)
    assert files(host, folder) == before
    replaced = host.run(f"REPLACE=yes TOKEN_USER_PIN={USER_PIN} TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)}"
                        f" {archive} {KEY_FILE} {ALLOWED}")
    assert replaced.rc == 0, output(replaced)
    assert_shown_output(RESTORED, replaced.stdout, shown)
    assert files(host, folder) == before
    assert ok(host, f"ls -d {STORE}/{folder}.before-restore-*").count("before-restore") == 1
    assert sign(host, slot_of(host)).rc == 0


OLD_FORMAT_SLOT = "sed -i '/libpkcs11_sw.so/{n;/tokversion/d}' /etc/opencryptoki/opencryptoki.conf"  # amd64's Soft


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.negative("daytwo/restore-token.sh",
                      expects="the restore refuses a slot that reads the old store format and changes nothing")
@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64", why="it edits the soft token's slot stanza, the token amd64 uses")
def test_a_slot_that_reads_the_old_store_format_is_refused_and_nothing_changes(fresh_host, target):
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    carried = carry(source, target, back_up(source)[0])
    ok(target, OLD_FORMAT_SLOT)
    before = files(target, ".")
    refused = target.run(f"TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {carried} {KEY_FILE} {ALLOWED}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"Refused: the archive holds the 3.12 store format, but slot {slot_of(target)} in"
                                     " /etc/opencryptoki/opencryptoki.conf lacks 'tokversion = 3.12'."), output(refused)
    assert files(target, ".") == before
    assert target.run(f"test -e {STORE}/{folder}/MK_USER").rc == 1


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.from_state(TOKEN_KEY)
@pytest.mark.only_hosts("debian13-amd64", why="it edits the soft token's slot stanza, the token amd64 uses")
def test_a_3_12_store_in_a_slot_without_tokversion_reads_as_a_locked_token(fresh_host, target):
    """Why the restore compares the store format with the slot's tokversion: a slot without the line reads the folder
    in the old format, and the token then shows nonsense flags and refuses the right PIN."""
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    archive = carry(source, target, back_up(source)[0])
    ok(target, OLD_FORMAT_SLOT)
    stop_pkcsslotd(target)
    ok(target, f"rm -rf {STORE}/{folder} /dev/shm/var.lib.opencryptoki.{folder}"
               f" && age -d -i {KEY_FILE} {archive} | tar -xpz -C {STORE} && pkcsslotd")
    slot = slot_of(target)
    flags = ok(target, f"pkcsconf -t -c {slot} | grep Flags")
    login = target.run(f"PKCS11_USER_PIN={USER_PIN} p11sak list-key all --slot {slot}")
    print(f"\n{flags}{output(login)}")
    assert "TOKEN_INITIALIZED" not in flags, flags
    assert login.rc != 0, output(login)
    assert "CKR_PIN_LOCKED" in login.stdout + login.stderr, output(login)


@pytest.mark.negative("daytwo/back-up-token.sh",
                      expects="while apache2 uses the token the backup refuses: Nothing was copied, no archive is "
                              "written")
@pytest.mark.uses("daytwo/make-backup-key.sh")
@pytest.mark.snippet(BACKUP, IN_USE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_token_that_httpd_uses_is_not_copied_until_httpd_stops(fresh_host):
    host, folder = fresh_host, FOLDER[arch(fresh_host)]
    serve_token(host)
    daemon = ok(host, "cat /run/opencryptoki/pkcsslotd.pid")
    recipient = make_key(host)
    refused = host.run(f"BACKUP_RECIPIENT={recipient} BACKUP_SIGNING_KEY={SIGNING_KEY} bash {snippet_path(BACKUP)}"
                       f" {BACKUPS}")
    print(f"\n$ back-up-token.sh {BACKUPS}   (httpd serving with the token's key)\n{refused.stderr}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"The token in {STORE}/{folder} is in use by process "), output(refused)
    assert "(apache2)" in refused.stderr, output(refused)
    assert refused.stderr.rstrip().endswith("Nothing was copied."), output(refused)
    assert host.run(f"ls {BACKUPS}/*.tar.gz*").rc != 0, "an archive was written"
    assert ok(host, "cat /run/opencryptoki/pkcsslotd.pid") == daemon  # the slot daemon was not touched
    ok(host, "apachectl stop; for i in $(seq 50); do pgrep -x apache2 >/dev/null || break; sleep 0.2; done")
    free = host.run(f"bash {snippet_path(IN_USE)}")
    assert free.stdout == f"No process uses the token in {STORE}/{folder}.\n", output(free)
    assert host.run(f"BACKUP_RECIPIENT={recipient} BACKUP_SIGNING_KEY={SIGNING_KEY} bash {snippet_path(BACKUP)}"
                    f" {BACKUPS}").rc == 0


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_token_folder_copied_in_while_its_shared_memory_remains_hides_the_public_key(fresh_host, target):
    """Why restore-token.sh removes /dev/shm/var.lib.opencryptoki.<folder>: openCryptoki keeps an index of the
    token's objects there, and a process that finds it already filled does not add the restored public objects."""
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    archive = carry(source, target, back_up(source)[0])
    stop_pkcsslotd(target)
    # what the backup and the restore do to every token of the host: with the slot daemon stopped, none opens
    down = target.run("pkcsconf -t")
    assert down.rc != 0, output(down)
    ok(target, f"rm -rf {STORE}/{folder} && age -d -i {KEY_FILE} {archive} | tar -xpz -C {STORE} && pkcsslotd")
    by_hand = key_attributes(target, slot_of(target))
    assert by_hand.count(f'Label: "{KEY}"') == 1, by_hand
    assert "Key: private RSA" in by_hand, by_hand
    stop_pkcsslotd(target)
    ok(target, f"rm /dev/shm/var.lib.opencryptoki.{folder} && pkcsslotd")
    assert key_attributes(target, slot_of(target)).count(f'Label: "{KEY}"') == 2


@pytest.mark.uses("daytwo/check-token-not-in-use.sh")
@pytest.mark.negative("daytwo/restore-token.sh", expects="the archive does not open without the backup key")
@pytest.mark.snippet(BACKUP, RESTORE, MAKE_KEY, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_the_archive_opens_only_with_the_backup_key_and_nothing_plain_is_written(fresh_host, target):
    source = fresh_host
    recipient = make_key(source)
    daemon = ok(source, "cat /run/opencryptoki/pkcsslotd.pid")
    ok(source, f"cp {ALLOWED} /root/not-a-key && chmod 600 /root/not-a-key")
    cases = [(f'BACKUP_RECIPIENT="{value}" BACKUP_SIGNING_KEY={SIGNING_KEY}', sentence) for value, sentence in (
        ("", "Set BACKUP_RECIPIENT to the public key (age1...) of your offline backup key"),
        (f"$(grep ^AGE-SECRET-KEY- {KEY_FILE})", "BACKUP_RECIPIENT holds a secret key."),
        ("age1notakey", "BACKUP_RECIPIENT is not an age public key: 'age1notakey'."))]
    cases += [(f'BACKUP_RECIPIENT={recipient} BACKUP_SIGNING_KEY="{value}"', sentence) for value, sentence in (
        ("", "Set BACKUP_SIGNING_KEY to the signing key make-backup-key.sh made beside the backup key"),
        ("/root/nowhere", "Cannot read the signing key in BACKUP_SIGNING_KEY (/root/nowhere):"),
        (ALLOWED, f"Refused: the signing key {ALLOWED} may be read by others (mode 644)"),
        ("/root/not-a-key", "BACKUP_SIGNING_KEY (/root/not-a-key) is not a signing key of make-backup-key.sh"))]
    for environment, sentence in cases:
        refused = source.run(f"{environment} bash {snippet_path(BACKUP)} {BACKUPS}")
        assert refused.rc == 1, output(refused)
        assert refused.stderr.rstrip().endswith("Nothing was copied."), output(refused)
        assert refused.stderr.startswith(sentence), output(refused)
        assert "AGE-SECRET-KEY-" not in refused.stderr, "the secret key was printed"
        assert "PRIVATE KEY" not in refused.stderr, "the signing key was printed"
        assert source.run(f"ls -A {BACKUPS} 2>/dev/null | grep -q .").rc == 1, "something was written"
        assert ok(source, "cat /run/opencryptoki/pkcsslotd.pid") == daemon, "the slot daemon was touched"

    ok(source, "touch /tmp/before-backup")
    archive, _said = back_up(source, recipient)
    assert encrypted(source, archive) == []
    # no plain copy left anywhere: no file the backup wrote or changed, outside the token store, reads as gzip or tar
    changed = ok(source, "find / -xdev -newer /tmp/before-backup -type f ! -path '/var/lib/opencryptoki/*'"
                         " ! -path '/proc/*' -size +0").split()
    assert archive in changed, changed
    plain = [path for path in changed
             if source.run(f"gzip -t {shlex.quote(path)} || tar -tf {shlex.quote(path)}").rc == 0]
    assert plain == [], plain
    manifest = ok(source, f"cat {archive.removesuffix('.tar.gz.age')}.manifest")
    assert f"recipient: {recipient}\n" in manifest
    assert "AGE-SECRET-KEY-" not in manifest

    carried = carry(source, target, archive)
    other = "/root/other-key.txt"
    make_key(target, other)  # a backup key, but not the one the archive was made for
    before = files(target, ".")
    wrong = target.run(f"TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {carried} {other} {ALLOWED}")
    print(f"\n$ restore-token.sh {carried} {other} {ALLOWED}   (another backup key)\n{wrong.stderr}")
    assert wrong.rc == 1, output(wrong)
    assert wrong.stderr.startswith(f"The identity in {other} does not open {carried} (age: "), output(wrong)
    assert f"Bring the secret key of the recipient the backup was made for: {recipient}." in wrong.stderr
    assert wrong.stderr.rstrip().endswith("Nothing was changed."), output(wrong)
    assert "line " not in wrong.stderr, output(wrong)
    no_admin = target.run(f"bash {snippet_path(RESTORE)} {carried} {KEY_FILE} {ALLOWED}")
    assert no_admin.rc == 1, output(no_admin)
    assert no_admin.stderr.startswith("Set TOKEN_ADMIN to the token administrator"), output(no_admin)
    ok(target, f"chmod 644 {KEY_FILE}")
    open_key = target.run(f"TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {carried} {KEY_FILE} {ALLOWED}")
    assert open_key.rc == 1, output(open_key)
    assert open_key.stderr.startswith(f"Refused: {KEY_FILE} may be read by others (mode 644)"), output(open_key)
    assert files(target, ".") == before


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.negative("daytwo/restore-token.sh",
                      expects="an archive and a manifest forged with the public recipient alone are refused before "
                              "anything is decrypted, and nothing is restored")
@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_an_archive_and_manifest_forged_with_the_public_recipient_are_refused(fresh_host, target):
    """age authenticates no sender: whoever knows the recipient makes an archive the backup key opens. With the
    genuine signature of another manifest beside the forged one, or with none, the restore refuses and the new host
    stays as it was. The negative case, the restore before the signature, unpacks the forgery as root."""
    source, folder = fresh_host, FOLDER[arch(fresh_host)]
    recipient = make_key(source)
    archive, _said = back_up(source, recipient)
    forged = forge(source, archive, recipient, "/tmp/forged/forged.tar.gz.age")
    listed = ok(source, f"age -d -i {KEY_FILE} {forged} | tar -tz")
    assert f"{folder}/{FORGED_FILE}" in listed.split(), "the backup key does not open the forgery"
    ok(source, f"cp {archive.removesuffix('.tar.gz.age')}.manifest.sig /tmp/forged/forged.manifest.sig")
    carried = carry(source, target, forged)
    manifest = carried.removesuffix(".tar.gz.age") + ".manifest"

    def state() -> str:
        return (files(target, ".") + ok(target, f"stat -c '%a %U:%G' {STORE}")
                + ok(target, "cat /run/opencryptoki/pkcsslotd.pid; ls -d /tmp/tmp.* 2>/dev/null || true")
                + ok(target, f"pkcsconf -t -c {slot_of(target)} | grep -E 'Label|Flags'"))

    before = state()
    for change, sentence in (
            ("true", f"Refused: {manifest} is not signed by the backup's signing key in {ALLOWED} (ssh-keygen: "),
            (f"rm {manifest}.sig", f"Refused: {manifest}.sig is missing.")):
        ok(target, change)
        refused = target.run(f"REPLACE=yes TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {carried} {KEY_FILE}"
                             f" {ALLOWED}")
        print(f"\n$ REPLACE=yes restore-token.sh {carried} {KEY_FILE} {ALLOWED}   (forged; {change})\n{refused.stderr}")
        assert_refused(refused, sentence)
        assert state() == before
    assert target.run(f"test -e {STORE}/{folder}/{FORGED_FILE}").rc == 1, "the forgery was restored"

    # The negative case: the restore before the signature unpacks the forged token folder.
    copy_to(target, OLD_RESTORE.read_text(encoding="utf-8"), "/tmp/old/restore-token.sh")
    copy_to(target, (SNIPPETS / IN_USE).read_text(encoding="utf-8"), "/tmp/old/check-token-not-in-use.sh")
    old = target.run(f"TOKEN_ADMIN={ADMIN} bash /tmp/old/restore-token.sh {carried} {KEY_FILE}")
    assert old.rc == 0, output(old)
    assert target.run(f"test -f {STORE}/{folder}/{FORGED_FILE}").rc == 0, \
        "the old restore did not unpack the forgery: the negative case no longer shows what the check refuses"


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.negative("daytwo/restore-token.sh",
                      expects="a genuine signed manifest beside another archive, a manifest signed by another key or "
                              "in another namespace, and an allowed signers file others may change are refused")
@pytest.mark.snippet(RESTORE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_a_swapped_archive_and_a_manifest_signed_by_another_key_are_refused(fresh_host):
    host, folder = fresh_host, FOLDER[arch(fresh_host)]
    recipient = make_key(host)
    archive, _said = back_up(host, recipient)
    stem, name = archive.removesuffix(".tar.gz.age"), archive.rsplit("/", 1)[1]
    forged = forge(host, archive, recipient, "/tmp/forged/forged.tar.gz.age")
    # the genuine manifest and its signature beside another archive that the backup key opens
    swapped = f"/tmp/swapped/{name}"
    ok(host, f"mkdir -p /tmp/swapped && cp {stem}.manifest {stem}.manifest.sig /tmp/swapped/ && cp {forged} {swapped}")
    # the forger's own keys, made by the same script, sign the forged manifest
    mallory = "/root/mallory-key.txt"
    make_key(host, mallory)
    sign_manifest(host, "/tmp/forged/forged.manifest", key=f"{mallory}.signing-key")
    # the backup's own signing key, in another namespace: a signature made for something else
    other_use = "/tmp/namespace/forged.tar.gz.age"
    ok(host, f"mkdir -p /tmp/namespace && cp {forged} /tmp/forged/forged.manifest /tmp/namespace/")
    sign_manifest(host, "/tmp/namespace/forged.manifest", namespace="file")
    ok(host, f"cp {ALLOWED} /root/open-allowed && chmod 666 /root/open-allowed")
    not_signed = "is not signed by the backup's signing key in"

    def state() -> str:
        return (files(host, folder) + ok(host, f"stat -c '%a %U:%G' {STORE}")
                + ok(host, "cat /run/opencryptoki/pkcsslotd.pid; ls -d /tmp/tmp.* 2>/dev/null || true"))

    before = state()
    for carried, allowed, sentence in (
            (swapped, ALLOWED, f"Refused: {swapped} does not match the sha256 in its signed manifest"),
            (forged, ALLOWED, f"Refused: /tmp/forged/forged.manifest {not_signed} {ALLOWED} (ssh-keygen: "),
            (other_use, ALLOWED, f"Refused: /tmp/namespace/forged.manifest {not_signed} {ALLOWED} (ssh-keygen: "),
            (archive, f"{mallory}.allowed_signers", f"Refused: {stem}.manifest {not_signed} {mallory}.allowed_signers"),
            (archive, "/root/open-allowed", "Refused: /root/open-allowed may be changed by others than root (owner"
                                            " root, mode 666)"),
            (archive, KEY_FILE, f"{KEY_FILE} is not an allowed signers file of make-backup-key.sh")):
        refused = host.run(f"REPLACE=yes TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {carried} {KEY_FILE}"
                           f" {allowed}")
        print(f"\n$ REPLACE=yes restore-token.sh {carried} {KEY_FILE} {allowed}\n{refused.stderr}")
        assert_refused(refused, sentence)
        assert state() == before
    assert host.run(f"test -e {STORE}/{folder}/{FORGED_FILE}").rc == 1, "the forgery was restored"


@pytest.mark.uses("daytwo/check-token-not-in-use.sh", "daytwo/make-backup-key.sh")
@pytest.mark.negative("daytwo/restore-token.sh", "daytwo/back-up-token.sh",
                      expects="a link or FIFO planted in the token folder is refused, not followed")
@pytest.mark.snippet(BACKUP, RESTORE, checker="testinfra")
@pytest.mark.from_state(TOKEN_KEY)
def test_what_a_pkcs11_member_plants_in_the_token_folder_is_refused_and_never_followed(fresh_host):
    """A member of pkcs11 (mallory) may write the store and the token folder. The backup refuses a symbolic link or
    a FIFO there, and a token folder replaced by a link; the restore refuses an archive that holds a link. The
    negative case, the script before, follows the link as root (its manifest holds the hash of a root-only file) and
    writes an archive that opens without a key."""
    host, folder = fresh_host, FOLDER[arch(fresh_host)]
    recipient = make_key(host)
    archive, _said = back_up(host, recipient)  # a good archive, for the restore's half
    ok(host, "useradd -M -G pkcs11 mallory && echo 'root only' > /root/secret && chmod 600 /root/secret")
    secret = ok(host, "sha256sum /root/secret").split()[0]
    token, planted = f"{STORE}/{folder}", f"{STORE}/{folder}/TOK_OBJ/ZZ000000.TOK"
    daemon = ok(host, "cat /run/opencryptoki/pkcsslotd.pid")

    def backup_refused(plant: str, sentence: str) -> None:
        ok(host, f"runuser -u mallory -- sh -c {shlex.quote(plant)}")
        refused = host.run(f"BACKUP_RECIPIENT={recipient} BACKUP_SIGNING_KEY={SIGNING_KEY} timeout 120"
                           f" bash {snippet_path(BACKUP)} /var/backups/again")
        print(f"\n# as mallory: {plant}\n$ back-up-token.sh /var/backups/again\n{refused.stderr}")
        assert refused.rc == 1, output(refused)
        assert refused.stderr.startswith(sentence), output(refused)
        assert refused.stderr.rstrip().endswith("Nothing was copied."), output(refused)
        assert host.run("ls -A /var/backups/again 2>/dev/null | grep -q .").rc == 1, "something was written"
        assert ok(host, "cat /run/opencryptoki/pkcsslotd.pid") == daemon, "the slot daemon was touched"

    backup_refused(f"ln -s /root/secret {planted}", f"Refused: {token} holds what openCryptoki never writes:"
                   f" {planted}, a symbolic link to /root/secret. A member of the pkcs11 group may have planted it.")
    ok(host, f"rm {planted}")
    backup_refused(f"mkfifo {planted}", f"Refused: {token} holds what openCryptoki never writes: {planted}, of type p.")
    ok(host, f"rm {planted}")
    backup_refused(f"mv {token} {token}.real && ln -s /root {token}",
                   f"Refused: {token} is a symbolic link, which openCryptoki never makes.")
    ok(host, f"rm {token} && mv {token}.real {token}")

    # The negative case: the script before, with the same link planted, reads the root-only file as root.
    ok(host, f"runuser -u mallory -- ln -s /root/secret {planted}")
    copy_to(host, OLD_BACKUP.read_text(encoding="utf-8"), "/tmp/old/back-up-token.sh")
    copy_to(host, (SNIPPETS / IN_USE).read_text(encoding="utf-8"), "/tmp/old/check-token-not-in-use.sh")
    old = host.run("bash /tmp/old/back-up-token.sh /var/backups/old")
    assert old.rc == 0, output(old)
    old_manifest = ok(host, "cat /var/backups/old/*.manifest")
    followed = re.search(rf"^{secret} \S+ \S+ {folder}/TOK_OBJ/ZZ000000.TOK$", old_manifest, re.M)
    assert followed, "the old script did not follow the link: the negative case no longer shows what the check refuses"
    assert encrypted(host, ok(host, "ls /var/backups/old/*.tar.gz").strip()) != []
    ok(host, f"rm {planted}")

    # The restore: an archive whose token folder holds a symbolic link is refused before anything changes.
    linked = repack(host, archive, "/tmp/linked/linked.tar.gz.age", f"ln -s /root/secret {folder}/TOK_OBJ/ZZ000000.TOK",
                    recipient)
    before = files(host, folder)
    refused = host.run(f"REPLACE=yes TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {linked} {KEY_FILE} {ALLOWED}")
    print(f"\n$ REPLACE=yes restore-token.sh {linked} {KEY_FILE} {ALLOWED}   (a link in the archive)\n{refused.stderr}")
    assert refused.rc == 1, output(refused)
    assert refused.stderr.startswith(f"Refused: {linked} holds what back-up-token.sh never writes"), output(refused)
    assert f"{folder}/TOK_OBJ/ZZ000000.TOK -> /root/secret" in refused.stderr, output(refused)
    assert files(host, folder) == before

    # A failure after the restore closed the store to the group (a file differs from the manifest): the store is
    # opened again, the slot daemon runs, the token folder is as it was.
    tampered = repack(host, archive, "/tmp/tampered/t.tar.gz.age", "true", recipient)
    manifest = tampered.removesuffix(".tar.gz.age") + ".manifest"
    copy_to(host, re.sub(rf"^[0-9a-f]{{64}}( .* {folder}/MK_SO)$", "0" * 64 + r"\1", ok(host, f"cat {manifest}"),
                         flags=re.M), manifest)
    sign_manifest(host, manifest)  # signed, so that the restore gets as far as the unpacked files
    failed = host.run(f"REPLACE=yes TOKEN_ADMIN={ADMIN} bash {snippet_path(RESTORE)} {tampered} {KEY_FILE} {ALLOWED}")
    assert failed.rc == 1, output(failed)
    assert failed.stderr.startswith(f"The unpacked files differ from {manifest}: "), output(failed)
    assert ok(host, f"stat -c '%a %U:%G' {STORE}").split() == ["770", "root:pkcs11"], "the store stayed closed"
    assert host.run("pkcsconf -s >/dev/null").rc == 0, "the slot daemon was not started again"
    assert files(host, folder) == before
    assert host.run(f"ls -d {STORE}/.restore.*").rc != 0, "the unpacked folder was left behind"


@pytest.mark.negative("daytwo/check-pin-strength.sh",
                      expects="a PIN of digits alone, too short, too long, of too few kinds, with a blank or not "
                              "set is refused")
@pytest.mark.negative("daytwo/make-backup-key.sh",
                      expects="an existing key file is kept: a new key never replaces an old one")
@pytest.mark.snippet(PIN_STRENGTH, MAKE_KEY, checker="testinfra")
def test_a_pin_of_digits_alone_is_refused_and_a_backup_key_is_never_overwritten(fresh_host):
    host = fresh_host
    cases = {"13572468": "The PIN in NEW_PIN is digits alone", "Tk7-pQ2": "The PIN in NEW_PIN has 7 characters",
             "abcdefg1": "The PIN in NEW_PIN uses 2 of", "Tk7 pQ2x": "The PIN in NEW_PIN has a blank",
             "Tk7-pQ2xZ": "The PIN in NEW_PIN has 9 characters, more than the token takes (8)", "Tk7-pQ2x": None}
    for pin, sentence in cases.items():
        said = host.run(f"NEW_PIN={shlex.quote(pin)} bash {snippet_path(PIN_STRENGTH)} NEW_PIN")
        assert pin not in said.stdout + said.stderr, "the PIN was printed"
        if sentence is None:
            assert said.rc == 0, output(said)
            assert said.stdout == "The PIN in NEW_PIN has 8 characters from 4 of the 4 kinds: strong enough.\n"
        else:
            assert said.rc == 1, output(said)
            assert said.stderr.startswith(sentence), output(said)
    assert host.run(f"bash {snippet_path(PIN_STRENGTH)} NEW_PIN").rc == 1  # not set

    recipient = make_key(host, "/tmp/key.txt")
    kept = ok(host, "cat /tmp/key.txt")
    again = host.run(f"bash {snippet_path(MAKE_KEY)} /tmp/key.txt")
    assert again.rc == 1, output(again)
    assert again.stderr.startswith("/tmp/key.txt exists: a new key never replaces an old one"), output(again)
    assert ok(host, "cat /tmp/key.txt") == kept
    assert ok(host, "age-keygen -y /tmp/key.txt").strip() == recipient
    # made on a host with a token store (this one has openCryptoki), it says to move the key offline
    noted = host.run(f"bash {snippet_path(MAKE_KEY)} /tmp/key2.txt")
    assert noted.rc == 0, output(noted)
    assert noted.stderr.startswith("Note: this host has an openCryptoki token store."), output(noted)
    assert "AGE-SECRET-KEY-" not in noted.stdout + noted.stderr, "the secret key was printed"


@pytest.mark.uses("daytwo/back-up-token.sh", "daytwo/restore-token.sh")
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
