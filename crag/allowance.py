"""Each user's share of what ingestion spends: OCR pages an hour, and the ingest workers.

**OCR.**
OCR is the costliest reading there is (a scanned page: one to two seconds of a core), so one
user's scans could take the server's cores from everyone. Each upload's reading gets the pages
its user has left of ``CRAG_API_OCR_PAGES_PER_HOUR`` (``OcrEngine.allowing``); a file needing
more is refused before any page is read, with the minutes until enough are free; what was read
is charged when the reading ends. (Within a file, pages past its first few run in OCR's long
lane, at a lower priority: ``crag_core.formats.ocr``.)

**Workers.** Uploads, page adds and syncs run on threads of their own (``IngestLanes``), a
user's first job under way in one lane and a second in another: one user's long work (two
60-page scans) holds at most one thread of the first lane, so another user's small file finds
one free there, and when more users wait than the lane has threads they take turns (the lane
is first come first served, with at most one job of each user in it).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from crag_core.formats.ocr import OcrEngine

WINDOW_S = 3600.0
"""The window an allowance is counted over."""


class OcrAllowance:
    """Pages read by OCR per user over ``WINDOW_S``, against ``pages_per_hour`` each."""

    def __init__(self, pages_per_hour: int) -> None:
        self.pages_per_hour = pages_per_hour
        self._read: dict[str, deque[tuple[float, int]]] = {}
        self._lock = threading.Lock()

    def engine(self, user: str, engine: OcrEngine, now: float | None = None) -> OcrEngine:
        """``engine`` allowing what ``user`` has left, and saying so when a file needs more."""
        now = time.monotonic() if now is None else now
        with self._lock:
            spent = self._spent(user, now)
            left = self.pages_per_hour - spent
            wait = self._wait(user, now)
        said = f"{left} of your {self.pages_per_hour} OCR pages an hour are left" + (
            f" (more in {wait} min)" if wait else ""
        )
        return engine.allowing(left, said)

    def charge(self, user: str, pages: int, now: float | None = None) -> None:
        """Count ``pages`` read by OCR for ``user``."""
        if pages > 0:
            with self._lock:
                at = time.monotonic() if now is None else now
                self._read.setdefault(user, deque()).append((at, pages))

    def _spent(self, user: str, now: float) -> int:
        read = self._read.get(user, deque())
        while read and read[0][0] <= now - WINDOW_S:
            read.popleft()
        return sum(pages for _, pages in read)

    def _wait(self, user: str, now: float) -> int:
        """Minutes until the oldest pages in the window are free again (0: none are held)."""
        read = self._read.get(user)
        if not read:
            return 0
        return max(1, round((read[0][0] + WINDOW_S - now) / 60))


class IngestLanes:
    """Ingest work in two lanes, at most one job of a user in each (see the module's text)."""

    def __init__(self, first: int, second: int) -> None:
        self.lanes = (
            ThreadPoolExecutor(max_workers=first, thread_name_prefix="crag-ingest"),
            ThreadPoolExecutor(max_workers=second, thread_name_prefix="crag-ingest-more"),
        )
        self._held: list[Counter[str]] = [Counter(), Counter()]
        self._lock = threading.Lock()

    def under_way(self, user: str) -> int:
        """How many jobs of ``user`` are queued or running."""
        with self._lock:
            return sum(held[user] for held in self._held)

    def submit(self, user: str, work: Callable[..., Any], *args: Any) -> Future[Any] | None:
        """``work(*args)`` in the first lane where ``user`` has no job; None: both have one."""
        with self._lock:
            lane = next((n for n, held in enumerate(self._held) if not held[user]), None)
            if lane is None:
                return None
            self._held[lane][user] += 1

        def release(_: object) -> None:
            with self._lock:
                self._held[lane][user] -= 1

        future = self.lanes[lane].submit(work, *args)
        future.add_done_callback(release)
        return future
