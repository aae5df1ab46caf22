"""Web pages as sources, fetched from a loopback server: bounds, types, redirects, refusals."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from typer.testing import CliRunner

from crag.cli import app
from crag.ingest import document_id, ingest
from crag_core.formats.extract import Unextractable
from crag_core.formats.fetch_url import fetch

PAGE = b"""<html><head><title>Velna river</title></head><body><nav>menuitem</nav>
<main><h1>Velna river</h1><h2>Bridges</h2><p>The Velna bridge gauge reads 4.2 m.</p></main>
</body></html>"""

ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/page.html": (200, {"Content-Type": "text/html; charset=utf-8"}, PAGE),
    "/moved": (302, {"Location": "/page.html"}, b""),
    "/loop": (302, {"Location": "/loop"}, b""),
    "/notes.md": (200, {"Content-Type": "application/octet-stream"}, b"# Notes\n\nKept notes."),
    "/clip.mp4": (200, {"Content-Type": "video/mp4"}, b"\x00\x00\x00 ftypmp42"),
    "/huge.html": (200, {"Content-Type": "text/html", "Content-Length": str(64 << 20)}, b""),
    "/gone.html": (404, {"Content-Type": "text/html"}, b"<p>not here</p>"),
}


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if self.path.startswith("/slow"):  # headers, then nothing for a while
                time.sleep(3)
            if self.path.startswith("/hop"):  # a redirect answered after 0.4 s, four times
                hop = int(self.path[4:] or 0)
                time.sleep(0.4)
                self.send_response(302)
                self.send_header("Location", f"/hop{hop + 1}" if hop < 3 else "/page.html")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.path.startswith("/trickle"):  # a byte every 0.3 s: each read is quick
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                for _ in range(40):
                    try:
                        self.wfile.write(b"x")
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    time.sleep(0.3)
                return
            if self.path.startswith("/drip") or self.path.startswith("/stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                for _ in range(40):  # no Content-Length: the size is known only by reading
                    try:
                        self.wfile.write(b"x" * 4096)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    if self.path.startswith("/drip"):
                        time.sleep(0.1)
                return
            status, headers, body = ROUTES.get(self.path, (404, {}, b""))
            try:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                if "Content-Length" not in headers:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_page_is_ingested_with_its_url_title_and_headings(hash_kb, site):
    kb = hash_kb("web")
    url = f"{site}/page.html"
    report = ingest(kb, [url])
    assert report.added == [url] and not report.failed
    hit = kb.search("Velna bridge gauge", 1, "keyword")[0]
    assert hit.metadata["source"] == url
    assert hit.metadata["title"] == "Velna river"
    assert hit.metadata["heading"] == "Velna river > Bridges"
    assert "menuitem" not in hit.page_content
    again = ingest(kb, [url])
    assert again.unchanged == [url] and again.chunks == 0  # same bytes: nothing rewritten
    assert document_id(url).startswith("page-")


def test_redirects_are_followed_within_a_bound(site):
    assert fetch(f"{site}/moved").url == f"{site}/page.html"
    with pytest.raises(Unextractable, match="more than 5 redirects"):
        fetch(f"{site}/loop")


def test_the_type_is_checked_and_an_unlabelled_file_goes_by_its_suffix(site):
    assert fetch(f"{site}/notes.md").kind == "markdown"
    with pytest.raises(Unextractable, match="unsupported content type 'video/mp4'"):
        fetch(f"{site}/clip.mp4")


def test_size_is_capped_by_the_declared_length_and_while_reading(site):
    with pytest.raises(Unextractable, match="larger than 20 MiB"):
        fetch(f"{site}/huge.html")
    with pytest.raises(Unextractable, match="larger than 65536 bytes"):
        fetch(f"{site}/stream", max_bytes=65536)


def test_a_slow_server_is_given_up_on(site):
    started = time.monotonic()
    with pytest.raises(Unextractable, match="no answer within 0.5 s"):
        fetch(f"{site}/slow", timeout_s=0.5)
    with pytest.raises(Unextractable, match="took longer than 1 s"):
        fetch(f"{site}/drip", timeout_s=1)  # every read is quick; the whole is not
    assert time.monotonic() - started < 3


def test_one_deadline_covers_every_hop_and_the_body(site):
    assert fetch(f"{site}/hop0", timeout_s=5).url == f"{site}/page.html"  # 1.6 s: within 5
    started = time.monotonic()
    with pytest.raises(Unextractable, match="no answer within 1 s"):
        fetch(f"{site}/hop0", timeout_s=1)  # four hops of 0.4 s: each within 1 s, not all
    assert time.monotonic() - started < 1.3
    started = time.monotonic()
    with pytest.raises(Unextractable, match="took longer than 1 s to download"):
        fetch(f"{site}/trickle", timeout_s=1)
    assert time.monotonic() - started < 1.3  # the watchdog cut the read that was waiting


def test_a_request_s_pages_share_its_deadline(site):
    started = time.monotonic()
    deadline = started + 1.0
    with pytest.raises(Unextractable, match="took longer than 1.0 s"):
        fetch(f"{site}/trickle", deadline=deadline)
    with pytest.raises(Unextractable, match="no answer within 0.0 s"):
        fetch(f"{site}/page.html", deadline=deadline)  # nothing is left for the next page
    assert time.monotonic() - started < 1.3


def test_the_cli_reports_a_bad_url_and_writes_nothing(hash_kb, site):
    result = CliRunner().invoke(
        app, ["ingest", f"{site}/gone.html", f"{site}/clip.mp4", "--collection", "web"]
    )
    assert result.exit_code == 1
    assert "answered 404" in result.output and "video/mp4" in result.output
    assert "0 added" in result.output
    with pytest.raises(Unextractable, match="no host"):
        fetch("https:///page.html")
