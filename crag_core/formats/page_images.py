"""A cited page as a picture: drawn once, in a reader child, and kept.

The page shows a source's page (a PDF's, a scan's) with the cited lines marked. The file may be
a stranger's upload, so it is drawn where files are read (``isolated.draw_bounded``: a child
within a memory ceiling and a deadline, the page's size checked before a pixel is drawn), never
in the server's own process. What was drawn, and what could not be (with its reason), is kept
by the file's path, size and modification time and the page, within ``CACHE_BYTES``: a second
request for the page costs a look-up.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

from crag_core.formats.extract import Unextractable, read_file
from crag_core.formats.isolated import draw_bounded

CACHE_BYTES = 64 * 1024 * 1024
"""The most drawn pages kept (a page is 50 to 300 KB: a few hundred pages)."""

_Key = tuple[str, int, int, str, int | None]


class PageImages:
    """Drawn pages by file and page (see the module's text); safe to share between threads."""

    def __init__(self, limit: int = CACHE_BYTES) -> None:
        self.limit = limit
        self.draws = 0
        self._kept: OrderedDict[_Key, bytes | str] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def png(self, path: Path, kind: str, page: int | None) -> bytes:
        """The page drawn as a PNG; ``Unextractable`` with the reason it cannot be shown."""
        try:
            stat = path.stat()
        except OSError as exc:
            raise Unextractable("the file is no longer there") from exc
        key = (str(path), stat.st_mtime_ns, stat.st_size, kind, page)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return _given(self._kept[key])
        try:
            kept: bytes | str = draw_bounded(read_file(path)[1], kind, page)
        except Unextractable as exc:
            kept = str(exc)
        self._keep(key, kept)
        return _given(kept)

    def _keep(self, key: _Key, kept: bytes | str) -> None:
        with self._lock:
            self.draws += 1
            if key in self._kept:
                return
            self._kept[key] = kept
            self._size += len(kept)
            while self._size > self.limit and self._kept:
                _, dropped = self._kept.popitem(last=False)
                self._size -= len(dropped)


def _given(kept: bytes | str) -> bytes:
    if isinstance(kept, str):
        raise Unextractable(kept)
    return kept
