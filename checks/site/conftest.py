"""The built guide served on localhost and a headless Chromium driven by Playwright; the booted token host the
reader walks of the day-two pages run on.

The site is built once per run into build/site-under-test (the same sphinx-build as `make html`),
served by a loopback HTTP server on a free port, and opened in Debian's Chromium. A missing Chromium
is a failure that says what to install.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from checks.hosts.acme import booted
from checks.hosts.engine import file_lock

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site-under-test"
SHOTS = ROOT / "build" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def site(request) -> Path:
    """The guide built once per run, whichever xdist worker asks first; the other waits for it under a lock and
    reads the same folder (no test writes into it). A build that failed is not tried again in the run."""
    run = request.config.zr_run_id
    out = SITE / run[:12]
    with file_lock(f"site-under-test-{run}"):
        done, failed = out / ".zr-built", SITE / f"{run[:12]}.failed"
        if not done.exists() and not failed.exists():
            for old in SITE.glob("*"):  # earlier runs' builds and notes
                shutil.rmtree(old) if old.is_dir() else old.unlink()
            proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", "-c", ".", "docs", str(out)],
                                  cwd=ROOT, capture_output=True, text=True)
            (done if proc.returncode == 0 else failed).write_text(proc.stderr[-4000:])
    assert done.exists(), f"the guide does not build:\n{failed.read_text()}"
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def base_url(site):
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(params=["debian13-amd64"], ids=str)
def booted_host(request, zr_host_pool):
    """A host from the Apache token site's prepared state (TOKEN_KEY) booted with systemd, for the reader walks of the
    day-two pages; removed after."""
    with booted(zr_host_pool, request.param) as host:
        yield host


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed: apt-get install chromium (sudo bash .ci/prereqs.sh does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def reader_page(browser, base_url):
    """A new browser context and its page, as a reader meets the guide; every request that leaves 127.0.0.1 is
    recorded in ``zr_outside`` and refused, every console error and page error recorded in ``zr_errors``. The
    caller closes ``page.context``."""
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
    pg = context.new_page()
    pg.zr_errors = []
    pg.zr_outside = []

    def route(r):
        if r.request.url.startswith(base_url) or r.request.url.startswith(("data:", "blob:")):
            r.continue_()
        else:
            pg.zr_outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    pg.on("console", lambda m: m.type == "error" and pg.zr_errors.append(m.text))
    pg.on("pageerror", lambda e: pg.zr_errors.append(str(e)))
    return pg


@pytest.fixture(scope="session")
def open_reader_page(browser, base_url):
    """reader_page as a fixture, for a fixture of wider scope than ``page`` (test modules do not import conftest)."""
    return functools.partial(reader_page, browser, base_url)


@pytest.fixture
def page(browser, base_url):
    """A fresh browser context per test (reader_page)."""
    pg = reader_page(browser, base_url)
    yield pg
    pg.context.close()


@pytest.fixture
def screenshot():
    """screenshot(page, name): the whole page as build/screenshots/<name>.png, for a person to look at."""

    def take(pg, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    return take


@pytest.fixture(scope="session")
def guide_pages(site) -> list[str]:
    """Every page of the built guide (paths under the site), without the generated index and search pages."""
    generated = ("genindex.html", "search.html")
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if not p.relative_to(site).parts[0].startswith("_") and p.name not in generated)
