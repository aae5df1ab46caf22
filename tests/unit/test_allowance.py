"""Each user's share of OCR (``crag.allowance``); a file past it refused before a page is read."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from crag.allowance import WINDOW_S, OcrAllowance
from crag_core.formats.extract import Damaged, extract_data
from crag_core.formats.ocr import OcrEngine

ENGINE = OcrEngine(program="/bin/false")  # never run: the file is refused first


def _tiff(pages: int) -> bytes:
    frames = [Image.new("L", (40, 40), 255) for _ in range(pages)]
    out = io.BytesIO()
    frames[0].save(out, format="TIFF", save_all=True, append_images=frames[1:])
    return out.getvalue()


def test_pages_read_are_counted_per_user_over_the_window():
    allowance = OcrAllowance(100)
    assert allowance.engine("bob", ENGINE, now=0.0).pages == 100
    allowance.charge("bob", 60, now=10.0)
    allowance.charge("bob", 30, now=20.0)
    bob = allowance.engine("bob", ENGINE, now=30.0)
    assert bob.pages == 10 and "10 of your 100 OCR pages an hour are left (more in 60 min)" in (
        bob.allowance
    )
    assert allowance.engine("alice", ENGINE, now=30.0).pages == 100  # hers are her own
    assert allowance.engine("bob", ENGINE, now=WINDOW_S + 15.0).pages == 70  # the first freed
    assert OcrEngine.from_json(bob.to_json()) == bob  # carried to the reader as it is


def test_a_file_needing_more_pages_than_are_left_is_refused_before_any_is_read():
    engine = OcrAllowance(100)
    engine.charge("bob", 97, now=0.0)
    bob = engine.engine("bob", ENGINE, now=1.0)
    with pytest.raises(Damaged, match="6 pages are in it, more than OCR may read now: 3 of your"):
        extract_data(_tiff(6), "image", "scan", bob)


def test_one_users_long_work_never_holds_another_users_file():
    import threading

    from crag.allowance import IngestLanes

    lanes = IngestLanes(first=2, second=1)
    release = threading.Event()
    started: list[str] = []

    def job(name: str) -> str:
        started.append(name)
        release.wait(10)
        return name

    held = [lanes.submit("alice", job, "alice-1"), lanes.submit("alice", job, "alice-2")]
    assert lanes.submit("alice", job, "alice-3") is None  # two under way: the third is refused
    assert lanes.under_way("alice") == 2
    bob = lanes.submit("bob", job, "bob-1")  # alice holds one thread of the first lane only
    assert bob is not None
    for _ in range(100):
        if "bob-1" in started:
            break
        threading.Event().wait(0.02)
    assert sorted(started) == ["alice-1", "alice-2", "bob-1"]
    release.set()
    assert [f.result(5) for f in (*held, bob) if f] == ["alice-1", "alice-2", "bob-1"]
    for _ in range(100):
        if lanes.under_way("alice") == 0:
            break
        threading.Event().wait(0.02)
    assert lanes.under_way("alice") == 0 and lanes.under_way("bob") == 0
