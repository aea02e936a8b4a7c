"""The reader of a day-two page on a host, for the reader walks (checks/site/): what they download from the built
site, where they keep it, and the shells they type the page's steps into.

* ``download(base_url, rel, folder)``: one file of the served site (a snippet's download link is
  ``_snippets/<path under snippets/>``, the bundle ``downloads/<name>``), saved as the reader saves it; the snippet's
  bytes are the checkout's (the link promises the byte-identical file).
* ``home(host, user)``: the user's home folder, made when the login has none (the crypto page makes the token
  administrator with ``useradd -m``; the prepared states make a system user without one).
* ``keep(host, user, *files)``: the files in ``~user/dl``, the user's own, as that user would download them.
* ``login(host, user, command, **secrets)``: command in the user's login shell (``su - USER``), as a reader logged in
  as USER types it, each secret typed in first as the pages advise (``read -rs NAME; export NAME``): read from
  standard input, never on a command line.
* ``as_root(command, **secrets)``: the same for root's shell in the reader's downloads folder.
* ``serve_under_systemd(host)``: the Apache token site on a host booted with systemd, httpd its ``apache2.service``;
  returns the test CA.
* ``key_check(host, **secrets)``: the Apache page's key check as the token administrator, from its downloads.
"""

from __future__ import annotations

import shlex
import urllib.request
from pathlib import Path

from checks.hosts import bundle
from checks.hosts.apache import serve_token
from checks.hosts.token import ADMIN
from checks.hosts.util import ok
from zrunbook import SNIPPETS


def download(base_url: str, rel: str, folder: Path) -> Path:
    dest = folder / Path(rel).name
    with urllib.request.urlopen(f"{base_url}/{rel}", timeout=30) as got:
        dest.write_bytes(got.read())
    if rel.startswith("_snippets/"):
        assert dest.read_bytes() == (SNIPPETS / rel.removeprefix("_snippets/")).read_bytes(), \
            f"the site's download link {rel} does not give the snippet's bytes"
    return dest


def snippets(base_url: str, folder: Path, *paths: str) -> list[Path]:
    """Each snippet from its download link on the page (``_snippets/PATH``)."""
    return [download(base_url, f"_snippets/{path}", folder) for path in paths]


def home(host, user: str) -> str:
    folder = ok(host, f"getent passwd {shlex.quote(user)} | cut -d: -f6").strip()
    ok(host, f"test -d {folder} || install -d -m 0750 -o {user} -g {user} {folder}")
    return folder


def keep(host, user: str, *files: Path) -> str:
    """The files in the user's ~/dl, the user's own; returns that folder."""
    folder = f"{home(host, user)}/dl"
    bundle.copy_in(host, *files, folder=folder)
    ok(host, f"chown -R {user}: {folder}")
    return folder


def _typed(command: str, secrets: dict[str, str]) -> tuple[str, str]:
    """(the shell text that reads each secret from standard input and exports it, then runs command; the input)."""
    reads = "".join(f"read -r {name} && export {name} && " for name in secrets)
    typed = "".join(f"{value}\n" for value in secrets.values())
    return reads + command, typed


def login(host, user: str, command: str, **secrets: str):
    text, typed = _typed(command, secrets)
    return host.run(f"printf %s {shlex.quote(typed)} | su - {user} -c {shlex.quote(text)}")


def as_root(host, command: str, folder: str = bundle.DL, **secrets: str):
    text, typed = _typed(command, secrets)
    return host.run(f"cd {folder} && printf %s {shlex.quote(typed)} | bash -c {shlex.quote(text)}")


def key_check(host, **secrets: str):
    """The Apache page's key check as the rotation page says to run it: as the token administrator, in its own login,
    from its own downloads (root's copy handed over, as the reader downloads it again as that user), the PIN typed at
    read -rs: not as httpd's user, whose other programs could read the PIN in its environment."""
    folder = f"{home(host, ADMIN)}/dl"
    ok(host, f"install -d -o {ADMIN} -g {ADMIN} {folder} && install -o {ADMIN} -g {ADMIN} -m 0644"
             f" {bundle.DL}/check-key-in-token.sh {folder}/")
    return login(host, ADMIN, "cd ~/dl && TOKEN_LABEL=IBMICATOK SERVER_NAME=www.example.com bash check-key-in-token.sh"
                              " localhost:443", **secrets)


def serve_under_systemd(host) -> str:
    ca = serve_token(host)
    assert ok(host, "systemctl is-active apache2.service").strip() == "active", "httpd is not systemd's unit"
    return ca
