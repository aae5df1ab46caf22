"""A file read within one memory ceiling and one deadline, whatever its reader does inside.

The readers bound what they build (cells, characters, pages, elements, an archive's size:
``crag_core.formats.extract``), but the libraries under them (pypdf, lxml through
BeautifulSoup, python-docx, python-pptx, openpyxl, markitdown, docutils) hold trees whose size
depends on how a file nests and what it declares, not on its bytes alone. So every type but
crag's own plain-text readers is read in a child process:

- one **reader server** per crag process (``python -m crag_core.formats.isolated``), started
  on first use with the readers loaded, listening on a Unix socket in a private folder, with
  no secrets in its environment; it ends when the process that started it does;
- it forks one **child per file** (about 10 ms), whose address space may grow at most
  ``MAX_READ_MEMORY`` past its start and which an alarm ends at ``MAX_READ_SECONDS``; at most
  ``MAX_READERS`` run at once (more wait their turn);
- the child answers in JSON (never pickle: it has parsed a stranger's file), which is read
  back within a size cap.

A file past the ceiling or the deadline is refused (``Damaged``) with that reason; the process
that asked holds only the file's bytes and what was read from it. Where there is no
``/proc`` or no Unix socket (not Linux), the readers run in the caller's process, bounded by
their own caps only.
"""

from __future__ import annotations

import atexit
import base64
import json
import logging
import math
import os
import resource
import select
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

from crag_core.formats.extract import (
    MAX_FILE_BYTES,
    PAGE_IMAGE_READERS,
    Damaged,
    Extracted,
    Section,
    Unextractable,
    configured_ocr,
    draw_page,
    extract_data,
)
from crag_core.formats.ocr import OcrEngine
from crag_core.text.table_shapes import table_from_json, table_json

MAX_READ_MEMORY = 256 * 1024 * 1024
"""How far reading one file may grow its reader's memory (the child's address space, which
bounds what it holds): the ceiling of every file, whatever its type or size."""
MAX_READ_SECONDS = 120
"""How long reading one file may take (a 300-page PDF reads in seconds)."""
MAX_READERS = 6
"""Files read at once (as many as the page's ingest lanes have threads: a reading never waits
behind another user's); the next waits for one to finish (so reading never holds more than
``MAX_READERS`` x ``MAX_READ_MEMORY``)."""
IN_PROCESS = frozenset({"text", "markdown"})
"""Types read by crag's own code in time and memory linear in the capped text: no child."""
PRELOAD = (
    "bs4",
    "lxml.etree",
    "lxml.html",
    "docx",
    "openpyxl",
    "pypdf",
    "pypdfium2",
    "pdfplumber",
    "PIL.Image",
    "markitdown.converters",
    "docutils.core",
)
"""Loaded once in the reader server, so each child starts with its reader ready."""
ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "PYTHONPATH")
"""The only variables the reader server gets: no key, token or address of crag's."""


def over_memory(memory: int) -> str:
    """The refusal of a file whose reading needs more than ``memory`` bytes."""
    return f"reading it needs more than {memory >> 20} MiB of memory"


OVER_MEMORY = over_memory(MAX_READ_MEMORY)
MAX_DRAW_SECONDS = 20
"""How long drawing one page may take (an ordinary page draws in well under a second)."""
START_S = 60.0
"""How long the reader server may take to start (its imports)."""

log = logging.getLogger(__name__)


def read_bounded(data: bytes, kind: str, name: str, ocr: OcrEngine | None = None) -> Extracted:
    """``extract_data(data, kind, name, ocr)`` within ``MAX_READ_MEMORY`` and ``MAX_READ_SECONDS``.

    Raises what the reader raises (``Unextractable``, ``Damaged``), and ``Damaged`` for a
    file that went past the ceiling or the deadline, or whose reader crashed. ``ocr``
    (default: the settings') is decided here, where the settings are, and sent to the child.
    """
    server = None if kind in IN_PROCESS else _reader_server()
    ocr = ocr or (configured_ocr() if kind in PAGE_IMAGE_READERS else None)
    if server is None:
        return extract_data(data, kind, name, ocr)
    limits = {"memory": MAX_READ_MEMORY, "seconds": MAX_READ_SECONDS}
    about = {"kind": kind, "name": name, "ocr": ocr.to_json() if ocr else None}
    header = json.dumps({**about, **limits}).encode() + b"\n"
    reply = _exchange(server, header, data, MAX_READ_SECONDS)
    if not reply:  # the child died before answering: its memory, its alarm, or a crash
        raise Damaged(
            f"{over_memory(MAX_READ_MEMORY)}, or more than {MAX_READ_SECONDS} s, or its reader "
            "crashed"
        )
    return _answer(json.loads(reply))


def draw_bounded(data: bytes, kind: str, page: int | None) -> bytes:
    """``draw_page(data, kind, page)`` in a reader child, within its memory and deadline.

    Within ``MAX_READ_MEMORY`` and ``MAX_DRAW_SECONDS``: a stranger's PDF is never drawn in the
    caller's process.

    ``Unextractable`` with the reason for a page that cannot be shown, past the ceiling or the
    deadline included (drawing a page of forms nested in forms can crash the drawing library:
    then only the child ends).
    """
    server = _reader_server()
    if server is None:
        return draw_page(data, kind, page)
    draw = {"kind": kind, "page": page}
    header = {"draw": draw, "memory": MAX_READ_MEMORY, "seconds": MAX_DRAW_SECONDS}
    try:
        reply = _exchange(server, json.dumps(header).encode() + b"\n", data, MAX_DRAW_SECONDS)
    except Damaged as exc:
        raise Unextractable(f"its page cannot be drawn: {exc}") from exc
    if not reply:
        raise Unextractable(
            f"drawing its page needs more than {MAX_READ_MEMORY >> 20} MiB or "
            f"{MAX_DRAW_SECONDS} s, or crashed its drawing"
        )
    answer = json.loads(reply)
    if answer.get("refused") is not None:
        raise Unextractable(str(answer["refused"]))
    return base64.b64decode(answer["png"])


def _exchange(server: _Running, header: bytes, data: bytes, seconds: float) -> bytes:
    """Send a child ``header`` and ``data``; what it answers (empty: it died first)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(seconds + 10)  # the child's alarm ends it first
        try:
            conn.connect(server.path)
            conn.sendall(header)
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
            return _received(conn)
        except TimeoutError as exc:
            raise Damaged(f"reading it took longer than {seconds:g} s") from exc
        except OSError as exc:
            raise Damaged(f"its reader stopped ({exc.strerror or exc})") from exc


def _received(conn: socket.socket) -> bytes:
    """Everything the child sent, at most ``MAX_READ_MEMORY`` bytes."""
    pieces: list[bytes] = []
    size = 0
    while piece := conn.recv(1 << 20):
        size += len(piece)
        if size > MAX_READ_MEMORY:
            raise Damaged(f"what was read from it is larger than {MAX_READ_MEMORY >> 20} MiB")
        pieces.append(piece)
    return b"".join(pieces)


def _answer(reply: dict[str, Any]) -> Extracted:
    """The ``Extracted`` the child sent, or its refusal raised."""
    if reply.get("refused") is not None:
        kind = Damaged if reply.get("damaged") else Unextractable
        raise kind(str(reply["refused"]))
    return Extracted(
        title=str(reply["title"]),
        file_type=str(reply["file_type"]),
        sections=[
            Section(
                str(s["text"]),
                s["page"],
                str(s["heading"]),
                bool(s.get("ocr")),
                tuple((str(t), (b[0], b[1], b[2], b[3])) for t, b in s.get("lines") or ()),
            )
            for s in reply["sections"]
        ],
        tables=tuple(table_from_json(t) for t in reply["tables"]),
    )


def _reply(data: bytes, kind: str, name: str, memory: int, ocr: OcrEngine) -> bytes:
    """What a child sends back for a file: its text and tables, or why not, as JSON."""
    over = over_memory(memory)
    try:
        extracted = extract_data(data, kind, name, ocr)
    except Damaged as exc:  # a reader's MemoryError (SystemError from C code) is its cause
        ran_out = isinstance(exc.__cause__, MemoryError | SystemError)
        return _refusal(over if ran_out else str(exc), damaged=True)
    except Unextractable as exc:
        return _refusal(str(exc), damaged=False)
    except MemoryError:
        return _refusal(over, damaged=True)
    sections = [
        {"text": s.text, "page": s.page, "heading": s.heading, "ocr": s.ocr, "lines": s.lines}
        for s in extracted.sections
    ]
    return json.dumps(
        {
            "title": extracted.title,
            "file_type": extracted.file_type,
            "sections": sections,
            "tables": [table_json(t) for t in extracted.tables],
        },
        ensure_ascii=False,
    ).encode()


def _drawn(data: bytes, draw: dict[str, Any], memory: int) -> bytes:
    """What a child sends back for a page to draw: the PNG (base64) or why not, as JSON."""
    page = draw.get("page")
    try:
        png = draw_page(data, str(draw.get("kind")), int(page) if page is not None else None)
    except Unextractable as exc:
        return _refusal(str(exc), damaged=False)
    except MemoryError:
        return _refusal(f"drawing its page needs more than {memory >> 20} MiB of memory", False)
    return json.dumps({"png": base64.b64encode(png).decode()}).encode()


def _refusal(reason: str, damaged: bool) -> bytes:
    return json.dumps({"refused": reason, "damaged": damaged}).encode()


# -- the reader server ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Running:
    process: subprocess.Popen[bytes]
    path: str


_lock = threading.Lock()
_running: _Running | None = None


def warm(kinds: set[str]) -> None:
    """Start the reader server in the background if files of ``kinds`` will need it.

    An ingest calls this before it opens the store, so the server's start overlaps that.
    """
    if kinds - IN_PROCESS:
        threading.Thread(target=_reader_server, name="crag-read-start", daemon=True).start()


def _reader_server() -> _Running | None:
    """The reader server of this process, started on first use; ``None`` where it cannot run."""
    global _running
    with _lock:
        if _running is not None and _running.process.poll() is None:
            return _running
        if not (os.path.exists("/proc/self/statm") and hasattr(socket, "AF_UNIX")):
            return None
        try:
            _running = _start()
        except (OSError, RuntimeError) as exc:
            log.warning("Files are read in this process (no reader server: %s).", exc)
            return None
        return _running


def _start() -> _Running:
    folder = tempfile.mkdtemp(prefix="crag-read-")  # 0700: only this user may connect
    path = os.path.join(folder, "socket")
    env = {k: v for k, v in os.environ.items() if k in ENVIRONMENT}
    process = subprocess.Popen(
        [sys.executable, "-m", "crag_core.formats.isolated", path],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        env=env,
        cwd=folder,
    )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_S)
    if not ready or process.stdout.readline().strip() != b"ready":
        process.kill()
        raise RuntimeError(f"the reader server did not start within {START_S:g} s")
    running = _Running(process, path)
    atexit.register(_stop, running)
    return running


def _stop(running: _Running) -> None:
    running.process.terminate()
    try:
        running.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        running.process.kill()
    shutil.rmtree(os.path.dirname(running.path), ignore_errors=True)


class _Child(socketserver.StreamRequestHandler):
    """One file, in a child forked for it: capped, read, answered, gone."""

    def handle(self) -> None:
        header = json.loads(self.rfile.readline(16384))
        memory, seconds = int(header["memory"]), float(header["seconds"])
        signal.alarm(math.ceil(seconds))
        grown = _address_space() + memory
        resource.setrlimit(resource.RLIMIT_AS, (grown, grown))
        data = self.rfile.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            self.wfile.write(_refusal(f"larger than {MAX_FILE_BYTES >> 20} MiB", damaged=False))
            return
        if isinstance(header.get("draw"), dict):
            self.wfile.write(_drawn(data, header["draw"], memory))
            return
        ocr = OcrEngine.from_json(header.get("ocr"))
        self.wfile.write(_reply(data, str(header["kind"]), str(header["name"]), memory, ocr))


class _Server(socketserver.ForkingMixIn, socketserver.UnixStreamServer):
    max_children = MAX_READERS


def _address_space() -> int:
    """This process's address space now, in bytes (``/proc/self/statm``'s first field)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def serve(path: str) -> None:
    """Run the reader server on the Unix socket ``path`` until its parent process is gone.

    It is ready at once; the readers' libraries (``PRELOAD``) are loaded one at a time while
    no file is waiting, so the first file is never held up by libraries it does not need (a
    child forked before its library is loaded imports it itself).
    """
    import importlib

    parent = os.getppid()
    pending = list(PRELOAD)
    with _Server(path, _Child) as server:
        print("ready", flush=True)
        while os.getppid() == parent:
            server.timeout = 0.0 if pending else 1.0
            server.handle_request()
            server.collect_children()
            if pending:
                try:
                    importlib.import_module(pending.pop(0))
                except ImportError:
                    continue
    os.unlink(path)


if __name__ == "__main__":
    serve(sys.argv[1])
