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
