"""A cited page's picture: drawn in a reader child under a ceiling, its size checked first, kept."""

from __future__ import annotations

import io
import resource
import time

import pytest
from PIL import Image

from benchmarks.fixtures.hostile_files import _GAUGE, _one_page, nested_forms_pdf, tall_page_pdf
from crag_core.formats.extract import PREVIEW_PIXELS, Unextractable
from crag_core.formats.isolated import MAX_DRAW_SECONDS
from crag_core.formats.page_images import PageImages


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_an_ordinary_page_is_drawn_once_and_kept(tmp_path):
    from benchmarks.fixtures.sample_files import make_pdf

    make_pdf(tmp_path / "report.pdf", pages=2)
    pages = PageImages()
    first = pages.png(tmp_path / "report.pdf", "pdf", 2)
    started = time.monotonic()
    again = pages.png(tmp_path / "report.pdf", "pdf", 2)
    assert again == first and pages.draws == 1 and time.monotonic() - started < 0.05
    assert Image.open(io.BytesIO(first)).size[0] == 900
    with pytest.raises(Unextractable, match="no page 3"):
        pages.png(tmp_path / "report.pdf", "pdf", 3)
    (tmp_path / "report.pdf").write_bytes(_one_page(b"0 0 612 792", b"", _GAUGE, []))
    assert pages.png(tmp_path / "report.pdf", "pdf", 1) != first  # a changed file is drawn anew


def test_a_page_of_enormous_size_is_drawn_within_the_pixel_bound_outside_this_process(tmp_path):
    name, data = tall_page_pdf()  # 582 bytes; drawn 900 wide it is 1.8 GB of pixels
    (tmp_path / name).write_bytes(data)
    before = _peak_mib()
    png = PageImages().png(tmp_path / name, "pdf", 1)
    width, height = Image.open(io.BytesIO(png)).size
    assert width * height <= PREVIEW_PIXELS and height > 50 * width  # narrower, whole
    assert _peak_mib() - before < 100, "the page was drawn in this process"
    (tmp_path / "strip.pdf").write_bytes(_one_page(b"0 0 612 2000000", b"", _GAUGE, []))
    with pytest.raises(Unextractable, match="too large to show"):
        PageImages().png(tmp_path / "strip.pdf", "pdf", 1)


def test_a_page_that_draws_for_ever_is_refused_at_its_deadline_and_the_refusal_kept(tmp_path):
    name, data = nested_forms_pdf()  # 7 KB: forms nested 30 deep, each drawing the next twice
    (tmp_path / name).write_bytes(data)
    pages = PageImages()
    started = time.monotonic()
    with pytest.raises(Unextractable, match="cannot be drawn|needs more than"):
        pages.png(tmp_path / name, "pdf", 1)
    assert time.monotonic() - started < MAX_DRAW_SECONDS + 10
    started = time.monotonic()
    with pytest.raises(Unextractable):
        pages.png(tmp_path / name, "pdf", 1)
    assert pages.draws == 1 and time.monotonic() - started < 0.05


def test_an_image_past_the_bound_is_refused_before_it_is_decoded(tmp_path):
    from benchmarks.fixtures.hostile_files import png_bomb

    name, data = png_bomb()
    (tmp_path / name).write_bytes(data)
    with pytest.raises(Unextractable, match="too large to show"):
        PageImages().png(tmp_path / name, "image", None)
