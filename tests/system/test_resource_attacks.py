"""The boundary under resource attacks: no caller can exhaust the server's memory, time or threads.

A real ``crag serve`` with sign-in, two users (bob may use only 'bobs'), a model that takes 3 s
a call, and on loopback a "public site" the operator allow-lists whose pages are slow in the
ways an attacker would make them: redirects answered slowly, a body trickled a byte a second.
Each attack stands beside the legitimate use it must not break: a real 20,000-row workbook,
a wide table, a page behind one redirect, two users working at once, an ordinary PDF's page
drawn, a spreadsheet with an ordinary name, a 1 MB inline document, an honest scan.

The server's own memory is read from ``/proc`` (its peak, ``VmHWM``): reading a file happens in
a child of the reader server under its own ceiling, so an upload's reading never grows it.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from benchmarks.fixtures.hostile_files import HOSTILE, workbook_rows
from benchmarks.fixtures.serve import Server, langgraph_dev
from tests.system.conftest import SECRETS, base_env
from tests.system.test_model_servers import model_server

ALICE, BOB = "tok-alice-3b71", "tok-bob-c09e"
PAGE = b"<html><body><main><h1>Gauges</h1><p>The Velna gauge reads 4.2 m.</p></main></body></html>"
HOP_S = 8.0
"""Each of four redirects is answered after this long: every hop within 30 s, all four not."""
PAGE_BUDGET_S = 30.0


class SlowSite:
    """A loopback site: a page, a page behind one redirect, slow redirects, a trickled body."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                path = self.path
                if path.startswith("/hop"):
                    time.sleep(HOP_S)
                    hop = int(path[4:] or 0)
                    self._send(302, {"Location": f"/hop{hop + 1}" if hop < 3 else "/page.html"})
                elif path == "/moved":
                    self._send(302, {"Location": "/page.html"})
                elif path == "/page.html":
                    self._send(200, {"Content-Type": "text/html"}, PAGE)
                elif path == "/trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    for _ in range(90):
                        try:
                            self.wfile.write(b"x")
                            self.wfile.flush()
                        except OSError:
                            return
                        time.sleep(1.0)
                else:
                    self._send(404, {})

            def _send(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def site() -> Iterator[SlowSite]:
    slow = SlowSite()
    yield slow
    slow.close()


@pytest.fixture(scope="module")
def served(
    sb50_data_dir: Path, site: SlowSite, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, Path]]:
    work = tmp_path_factory.mktemp("resource-attacks")
    shutil.copytree(sb50_data_dir, work / "data")
    with model_server(work, 3.0) as (slow_model, _, _):
        env = base_env(
            work / "data",
            CRAG_API_TOKENS=f"alice:{ALICE},bob:{BOB}",
            CRAG_API_COLLECTIONS="bob:bobs",
            CRAG_API_MAX_RUNS_PER_USER="2",
            CRAG_API_FETCH_ALLOW=site.url.removeprefix("http://"),
            CRAG_MODEL="openai-compatible:scripted",
            CRAG_BASE_URL=slow_model,
            CRAG_WEB_SEARCH="off",
            CRAG_ANSWER_CACHE="false",
            CRAG_API_OCR_PAGES_PER_HOUR="8",
            **SECRETS,
        )
        with langgraph_dev(env, work) as srv:
            yield srv, work / "data"


def client(server: Server, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=180
    )


def server_pid(server: Server) -> int:
    """The API server's process: the largest of the server's process group."""
    group = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == server.proc.pid:  # its process group
                group.append((_status(int(stat.parent.name), "VmRSS"), int(stat.parent.name)))
        except (OSError, ValueError, IndexError):
            continue
    return max(group)[1]


def _status(pid: int, key: str) -> int:
    """A ``/proc/<pid>/status`` figure in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    return 0


def test_no_upload_grows_the_server_by_what_a_file_declares(served: tuple[Server, Path]):
    server, data = served
    bob = client(server, BOB)
    warm = client(server, ALICE).put(  # the encoder loaded once, as on any server in use
        "/crag/collections/warm-up/files/w.md", content=b"# W\n\nThe gauge reads 4 m.\n"
    )
    assert warm.status_code == 200
    pid = server_pid(server)
    before = _status(pid, "VmHWM")
    reasons = {}
    for attack in [
        "xlsx: declared 16,384 x 100,000 sheet",
        "xlsx: a cell in the last column of 3,000 rows",
        "csv: 200 headers of 1,000 characters",
        "docx: a 50,000-character cell spanning 20,000 columns",
        "epub: 1 million elements in 13 KB",
        "html: 2.5 million elements",
        "rst: 400,000 paragraphs",
        "pdf: a stream that unpacks to 200 MiB",
    ]:
        name, body = HOSTILE[attack]()
        started = time.monotonic()
        reply = bob.put(f"/crag/collections/bobs/files/{name}", content=body)
        assert time.monotonic() - started < 30, attack
        assert reply.status_code in (200, 422), reply.text
        reasons[attack] = reply.json().get("reason", "")
    assert "more than 2,000,000 cells" in reasons["xlsx: a cell in the last column of 3,000 rows"]
    assert "more than 2,000,000 characters" in reasons["csv: 200 headers of 1,000 characters"]
    assert "more than 200,000 HTML elements" in reasons["epub: 1 million elements in 13 KB"]
    assert "more than 256 MiB of memory" in reasons["rst: 400,000 paragraphs"]
    grown_mib = (_status(pid, "VmHWM") - before) / 1024
    assert grown_mib < 256, f"the server grew {grown_mib:.0f} MiB"
    # Beside them, a real workbook of 5,000 rows is taken whole (about 700 chunks embedded; the
    # reader's own bound over 20,000 rows is test_reader_bounds', without the encoder's minutes).
    name, body = workbook_rows(5_000)  # its time: the encoder's, untested
    reply = bob.put(f"/crag/collections/bobs/files/{name}", content=body, timeout=600)
    assert reply.status_code == 200 and reply.json()["status"] == "added", reply.text
    kept = sorted(p.name for p in (data / "uploads" / "bobs").iterdir())
    assert kept == ["declared.xlsx", "readings_5000.xlsx", "spanned.docx"]
    grown_mib = (_status(pid, "VmHWM") - before) / 1024
    assert grown_mib < 256, f"the server grew {grown_mib:.0f} MiB"


def test_slow_pages_hold_no_lock_no_route_and_no_more_than_their_deadline(
    served: tuple[Server, Path], site: SlowSite
):
    server, _ = served
    bob, alice = client(server, BOB), client(server, ALICE)
    done: dict[str, tuple[float, httpx.Response]] = {}

    def add(key: str, url: str) -> None:
        started = time.monotonic()
        reply = bob.post("/crag/collections/bobs/sources", json={"urls": [url]})
        done[key] = (time.monotonic() - started, reply)

    hops = threading.Thread(target=add, args=("hops", f"{site.url}/hop0"))
    hops.start()
    time.sleep(1.0)
    started = time.monotonic()  # bob's own upload, to the collection his fetch is adding to
    upload = bob.put("/crag/collections/bobs/files/notes.md", content=b"# Notes\n\nDry week.\n")
    assert upload.status_code == 200 and time.monotonic() - started < 15  # no lock held
    trickle = threading.Thread(target=add, args=("trickle", f"{site.url}/trickle"))
    trickle.start()
    time.sleep(1.0)
    third = bob.put("/crag/collections/bobs/files/more.md", content=b"# More\n\nWet week.\n")
    assert third.status_code == 429 and "limit 2" in third.json()["detail"]
    started = time.monotonic()  # another user is served meanwhile
    listed = alice.get("/crag/collections")
    mine = alice.put("/crag/collections/alices/files/a.md", content=b"# A\n\nThe gauge.\n")
    assert listed.status_code == 200 and mine.status_code == 200
    assert time.monotonic() - started < 15
    hops.join(timeout=120)
    trickle.join(timeout=120)
    for key in ("hops", "trickle"):
        seconds, reply = done[key]
        assert reply.status_code == 200 and reply.json()["failed"], reply.text
        assert seconds < PAGE_BUDGET_S + 8, (key, seconds)  # one deadline, not one per hop
    # A page behind one redirect is still added; an address that does not parse is named.
    mixed = bob.post(
        "/crag/collections/bobs/sources",
        json={"urls": ["http://0177.0.0.1/", f"{site.url}/moved"]},
    )
    assert mixed.status_code == 422 and "0177.0.0.1" in mixed.json()["detail"]
    assert mixed.json()["added"] == [f"{site.url}/moved"], mixed.text


def test_runs_are_counted_as_runs_on_any_thread(served: tuple[Server, Path]):
    server, _ = served
    bob = client(server, BOB)
    thread = bob.post("/threads", json={}).json()["thread_id"]
    run = {
        "assistant_id": "crag",
        "input": {"question": "Which team won Super Bowl 50?"},
        "context": {"collection": "bobs"},
        "multitask_strategy": "enqueue",
    }
    first = bob.post(f"/threads/{thread}/runs", json=run)
    second = bob.post(f"/threads/{thread}/runs", json=run)
    assert first.status_code == 200 and second.status_code == 200, second.text
    queued = bob.post(f"/threads/{thread}/runs", json=run)  # a third on the same thread
    assert queued.status_code == 429 and "2 runs of yours" in queued.json()["detail"]
    stateless = bob.post("/runs", json={k: v for k, v in run.items() if k != "multitask_strategy"})
    assert stateless.status_code == 429
    call = {"name": "crag", "arguments": run["input"], "context": run["context"]}
    mcp = bob.post(  # an MCP client's tool call is a run too, made through the same API
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
        headers={"Accept": "application/json"},
    )
    # The run it makes (POST /runs/wait through langgraph-api's own client) gets crag's 429;
    # langgraph-api's MCP handler answers the client with a 500 for it.
    assert mcp.status_code != 200 or "result" not in mcp.json(), mcp.text
    assert 'POST http://api/runs/wait "HTTP/1.1 429' in server.log_path.read_text(errors="replace")
    bob = client(server, BOB)  # that 500 closed the connection it came on
    for made in (first, second):
        bob.post(f"/threads/{thread}/runs/{made.json()['run_id']}/cancel")


def test_clear_refusals_leave_nothing_on_disk(served: tuple[Server, Path]):
    server, data = served
    alice = client(server, ALICE)
    for name in ("report\u202eexe.md", "a\x1b[31mred.md", "zero\u200bwidth.md"):
        reply = alice.put(f"/crag/collections/alices/files/{quote(name)}", content=b"# x\n\ny\n")
        assert reply.status_code == 422 and "U+" in reply.json()["detail"], reply.text
    bad = alice.put("/crag/collections/-bad-/files/a.md", content=b"# x\n\ny\n")
    assert bad.status_code == 400 and "not a valid collection name" in bad.json()["detail"]
    refused = alice.put("/crag/collections/fresh-one/files/broken.pptx", content=b"PK\x03\x04")
    assert refused.status_code == 422
    uploads = {p.name for p in (data / "uploads").iterdir()}
    assert "-bad-" not in uploads and "fresh-one" not in uploads


def test_a_table_name_in_a_reserved_namespace_holds_no_worker(served: tuple[Server, Path]):
    import io

    from openpyxl import Workbook

    server, _ = served
    bob, alice = client(server, BOB), client(server, ALICE)
    book = Workbook()
    book.active.title = "Master"
    book.active.append(["gauge", "level"])
    book.active.append(["Velna", 4.2])
    sheet = io.BytesIO()
    book.save(sheet)
    csv = b"gauge,level\nVelna,4.2\nOrsk,3.1\n"
    for name, body in [
        ("sqlite_master.csv", csv),
        ("SQLite_Stat1.csv", csv),
        ("crag_tables.csv", csv),
        ("sqlite.xlsx", sheet.getvalue()),  # its sheet's table: sqlite_master
    ]:
        started = time.monotonic()
        reply = bob.put(f"/crag/collections/bobs/files/{name}", content=body)
        assert reply.status_code == 200 and reply.json()["status"] == "added", reply.text
        assert time.monotonic() - started < 30, name  # it once never answered
    started = time.monotonic()  # every worker is free: another user's ordinary file goes in
    reply = alice.put("/crag/collections/alices/files/sales.csv", content=csv)
    assert reply.status_code == 200 and time.monotonic() - started < 30


def test_a_page_image_is_drawn_under_a_ceiling_never_in_the_server(served: tuple[Server, Path]):
    import io

    from PIL import Image

    from benchmarks.fixtures.hostile_files import tall_page_pdf
    from benchmarks.fixtures.sample_files import make_pdf
    from crag_core.formats.extract import PREVIEW_PIXELS

    server, data = served
    bob = client(server, BOB)
    make_pdf(data / "honest.pdf", pages=2)
    for name, body in [tall_page_pdf(), ("honest.pdf", (data / "honest.pdf").read_bytes())]:
        reply = bob.put(f"/crag/collections/bobs/files/{name}", content=body)
        assert reply.status_code == 200, reply.text
    tall = bob.put("/crag/collections/bobs/files/tall_page.pdf", content=tall_page_pdf()[1])
    doc_id = tall.json()["doc_id"]
    pid = server_pid(server)
    before = _status(pid, "VmHWM")
    for _ in range(3):  # 582 bytes that drew 1.8 GB of pixels in the server, each request
        page = bob.get(f"/crag/collections/bobs/chunks/{doc_id}__c0000/page.png")
        assert page.status_code == 200, page.text
        width, height = Image.open(io.BytesIO(page.content)).size
        assert width * height <= PREVIEW_PIXELS
    grown_mib = (_status(pid, "VmHWM") - before) / 1024
    assert grown_mib < 64, f"the server grew {grown_mib:.0f} MiB drawing a page"
    honest = bob.get("/crag/collections/bobs/documents").json()["documents"]
    doc = next(d for d in honest if d["source"].endswith("honest.pdf"))
    first = bob.get(f"/crag/collections/bobs/chunks/{doc['doc_id']}__c0001/page.png")
    assert first.status_code == 200 and Image.open(io.BytesIO(first.content)).size[0] == 900


def test_every_door_into_the_indexer_holds_its_limits(served: tuple[Server, Path]):
    server, _ = served
    alice = client(server, ALICE)
    urls = [f"https://example.org/{n}" for n in range(25)]
    big = [{"page_content": "word " * 600_000, "metadata": {"source": "big"}}]  # 3 MB
    thread = alice.post("/threads", json={}).json()["thread_id"]
    run = {"assistant_id": "indexer", "context": {"collection": "alices"}}
    doors: list[dict[str, Any]] = [
        {"input": {"urls": urls}},
        {"command": {"update": {"urls": urls}}},
        {"command": {"update": [["urls", urls]]}},
        {"command": {"update": {"docs": big}}},
        {"input": None, "command": {"goto": [{"node": "index", "input": {"docs": big}}]}},
    ]
    for carried in doors:
        reply = alice.post(f"/threads/{thread}/runs/wait", json=run | carried)
        assert reply.status_code == 413, (list(carried), reply.text[:200])
    state = alice.post(f"/threads/{thread}/state", json={"values": {"docs": big}})
    assert state.status_code == 413 and "2,000,000" in state.json()["detail"]
    made = alice.post("/threads", json={"supersteps": [{"updates": [{"values": {"urls": urls}}]}]})
    assert made.status_code == 413 and "25 web pages" in made.json()["detail"]
    call = {"name": "indexer", "arguments": {"urls": urls}, "context": run["context"]}
    mcp = alice.post(  # an MCP tool call makes its run through the same API
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
        headers={"Accept": "application/json"},
    )
    assert mcp.status_code != 200 or "result" not in mcp.json(), mcp.text
    assert 'POST http://api/runs/wait "HTTP/1.1 413' in server.log_path.read_text(errors="replace")
    alice = client(server, ALICE)  # the MCP handler's 500 closed the connection it came on
    honest = [
        {"page_content": "The Velna gauge reads 4.2 m. " * 35_000, "metadata": {"source": "n"}}
    ]
    done = alice.post(  # about 1 MB: taken, as an upload of it would be
        "/runs/wait", json=run | {"input": {"docs": honest}}, timeout=600
    )
    assert done.status_code == 200 and done.json()["report"]["added"] == ["n"], done.text[:300]


def test_ocr_is_shared_by_an_allowance_per_user(served: tuple[Server, Path]):
    from benchmarks.fixtures.sample_files import make_scan_pdf

    server, data = served
    bob, alice = client(server, BOB), client(server, ALICE)
    make_scan_pdf(data / "scan6.pdf", pages=6)
    make_scan_pdf(data / "scan3.pdf", pages=3)
    first = bob.put(
        "/crag/collections/bobs/files/scan6.pdf", content=(data / "scan6.pdf").read_bytes()
    )
    assert first.status_code == 200 and first.json()["ocr_pages"] == 6, first.text
    started = time.monotonic()  # 2 of bob's 8 pages an hour are left: refused before reading
    second = bob.put(
        "/crag/collections/bobs/files/scan3.pdf", content=(data / "scan3.pdf").read_bytes()
    )
    assert second.status_code == 422 and time.monotonic() - started < 10
    assert "2 of your 8 OCR pages an hour are left" in second.json()["reason"], second.text
    theirs = alice.put(
        "/crag/collections/alices/files/scan3.pdf", content=(data / "scan3.pdf").read_bytes()
    )
    assert theirs.status_code == 200 and theirs.json()["ocr_pages"] == 3, theirs.text
