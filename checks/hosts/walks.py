"""Walking how-to chapters on the clean walkthrough host, as a reader (checks/walkthrough/).

* ``READER``: what the pages ask a reader to set (service user, token label and PINs, the test CA's file).
* ``walk(host, *chapters, extra=None)``: the service user created (the crypto page's stated precondition), then
  each chapter's steps in page order (zrunbook.walkthrough.walk_chapter), stopping at the first that fails.
* ``WALKED[chapter]``: a clean-host State (checks/hosts/steps.py) in which the chapter and those before it
  (``walk_order``) have been walked, so that a later chapter's walk starts there instead of repeating theirs:
  the IHS walk starts where the crypto walk ended, the WebSEAL walk where the IHS walk did. Its tag hashes
  the pages of those chapters and every snippet folder they name, so a changed page walks again. After a
  commit the slot daemon is started again with the crypto page's own step, as a reader after a reboot.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

from checks.hosts.apache import QEMU_SIGALGS
from checks.hosts.steps import State, arch
from checks.hosts.token import ADMIN, LABEL, PINS
from zrunbook import ROOT, walkthrough

SERVICE_USER = "wasadmin"
READER = {"SERVICE_USER": SERVICE_USER, "TOKEN_ADMIN": ADMIN, "TOKEN_LABEL": LABEL, "CA_FILE": "/root/test-ca/ca.crt",
          **PINS}
START_SLOTD = "crypto/opencryptoki/start-pkcsslotd.sh"


def reader_env(host, extra: dict | None = None) -> dict[str, str]:
    """READER, and on the s390x host the client's SHA-512 signature schemes (under qemu the ICA token cannot
    hash with SHA-256; the session page says so)."""
    env = dict(READER)
    if arch(host) == "s390x":
        env["SIGALGS"] = QEMU_SIGALGS
    return {**env, **(extra or {})}


def walk(host, *chapters: str, extra: dict | None = None) -> walkthrough.Report:
    if host.run(f"id {SERVICE_USER}").rc != 0:
        host.run_expect([0], f"useradd -m {SERVICE_USER}")  # the crypto page's precondition
    if host.run(f"id {ADMIN}").rc != 0:
        host.run_expect([0], f"useradd -m {ADMIN}")  # the token administrator's login, the same page's precondition
    env = reader_env(host, extra)
    total = walkthrough.Report()
    for name in chapters:
        report = walkthrough.walk_chapter(host, name, walkthrough.DEBIAN_TABS, env, arch=arch(host))
        total.ran += report.ran
        total.passed_over += report.passed_over
        print(f"{name}: {report.summary()}")
        assert report.failed is None, report.failed
    return total


def _stop_slotd(host) -> None:
    """Stop pkcsslotd before the commit without procps (the clean host has no pkill): by its /proc entry."""
    host.run("for p in /proc/[0-9]*; do [ \"$(cat $p/comm 2>/dev/null)\" = pkcsslotd ] && kill ${p#/proc/}; done; "
             "sleep 1")


def _resume(host) -> None:
    script = f"bash /snippets/{START_SLOTD}"
    host.run_expect([0], f"su - root -c {shlex.quote(script)}")


def _state(name: str) -> State:
    order = walkthrough.walk_order(name)
    pages = tuple(f"docs/{page}.md" for c in order for page in walkthrough.chapter(c))
    indexes = tuple(f"docs/how-to/{c}/index.md" for c in order)
    folders = sorted({PurePosixPath(s.snippet).parts[0] for c in order for page in walkthrough.chapter(c)
                      for s in walkthrough.steps(page, walkthrough.DEBIAN_TABS).steps})

    def prepare(host) -> list[str]:
        return walk(host, *order).ran

    return State(f"walked-{name}", prepare, resume=_resume, stop=_stop_slotd, snippets=tuple(folders),
                 files=pages + indexes, clean=True)


WALKED = {name: _state(name) for name in ("crypto", "ihs")}
assert all((ROOT / "docs" / "how-to" / name / "index.md").is_file() for name in WALKED)
