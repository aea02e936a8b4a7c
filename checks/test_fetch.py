"""zrunbook.fetch: a pinned download shared by xdist workers is fetched once and never read half-written."""

from __future__ import annotations

import hashlib
import http.server
import threading
from concurrent.futures import ProcessPoolExecutor
from functools import partial

from zrunbook import fetch


def test_two_processes_fetching_one_file_at_once_both_get_it_whole(tmp_path):
    served = tmp_path / "www"
    served.mkdir()
    data = bytes(range(256)) * 40000  # 10 MB: long enough for the two fetches to overlap
    (served / "runtime.zip").write_bytes(data)
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/runtime.zip"
        dest = tmp_path / "cache" / "runtime.zip"
        sha = hashlib.sha256(data).hexdigest()
        with ProcessPoolExecutor(2) as pool:
            got = list(pool.map(fetch.pinned, [url, url], [sha, sha], [dest, dest]))
    finally:
        server.shutdown()
    assert got == [dest, dest]
    assert dest.read_bytes() == data
    assert not dest.with_name(dest.name + ".part").exists()
