"""Scanned pages and image files read by OCR (the real Tesseract), bounded, said when not.

Pages are drawn from text PDFs of known sentences (``benchmarks.fixtures.sample_files``) at a
scanner's 150 dpi, so what OCR reads is counted against what the page says.
"""

from __future__ import annotations

import io
import stat
import time
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from benchmarks.fixtures.sample_files import (
    make_page_image,
    make_pdf,
    make_scan_pdf,
    page_images,
)
from benchmarks.measurements.ocr import word_accuracy
from crag.cli import app
from crag.ingest import ingest
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.formats import ocr
from crag_core.formats.extract import FILE_TYPES, Damaged, Unextractable, configured_ocr, extract
from crag_core.formats.isolated import read_bounded
from tests.fakes import HashEmbeddings


@pytest.fixture(scope="module")
def engine():
    found = ocr.ocr_engine()
    assert found.program, f"the tests need Tesseract (`make ocr-required`): {found.why_not}"
    return found


def recall(sentences, text):
    """The share of the sentences' words found, in order, in ``text``."""
    return word_accuracy(" ".join(sentences), text)


def test_a_scanned_pdf_is_read_page_by_page_and_marked_as_ocr(engine, tmp_path):
    body = make_scan_pdf(tmp_path / "scan.pdf", pages=2)
    extracted = read_bounded((tmp_path / "scan.pdf").read_bytes(), "pdf", "scan", engine)
    assert [(s.page, s.ocr) for s in extracted.sections] == [(1, True), (2, True)]
    for section, sentences in zip(extracted.sections, body, strict=True):
        assert recall(sentences, section.text) >= 0.95, section.text


def test_a_pdf_with_text_and_scanned_pages_reads_each_its_own_way(engine, tmp_path):
    from pypdf import PdfWriter

    text = make_pdf(tmp_path / "text.pdf", pages=1)
    scanned = make_scan_pdf(tmp_path / "scan.pdf", pages=1)
    writer = PdfWriter()
    writer.append(str(tmp_path / "text.pdf"))
    writer.append(str(tmp_path / "scan.pdf"))
    writer.write(tmp_path / "both.pdf")
    sections = extract(tmp_path / "both.pdf", engine).sections
    assert [(s.page, s.ocr) for s in sections] == [(1, False), (2, True)]
    assert recall(text[0], sections[0].text) == 1.0
    assert recall(scanned[0], sections[1].text) >= 0.95


@pytest.mark.parametrize("suffix", [".png", ".jpg", ".webp", ".bmp"])
def test_an_image_file_is_read(engine, tmp_path, suffix):
    sentences = make_page_image(tmp_path / f"page{suffix}")
    extracted = extract(tmp_path / f"page{suffix}", engine)
    ((section,),) = [extracted.sections]
    assert extracted.file_type == "image" and section.ocr and section.page is None
    assert recall(sentences, section.text) >= 0.95


def test_a_tiff_of_several_pages_keeps_its_pages(engine, tmp_path):
    images, body = page_images(pages=2)
    images[0].save(tmp_path / "fax.tiff", save_all=True, append_images=images[1:])
    sections = extract(tmp_path / "fax.tiff", engine).sections
    assert [s.page for s in sections] == [1, 2]
    assert all(recall(b, s.text) >= 0.95 for b, s in zip(body, sections, strict=True))


def test_a_screenshot_sized_image_is_read_at_twice_its_size(engine, tmp_path):
    sentences = make_page_image(tmp_path / "small.png", dpi=80)  # 660 x 880: small letters
    assert recall(sentences, extract(tmp_path / "small.png", engine).sections[0].text) >= 0.9


def test_an_image_without_text_is_said_to_have_none(engine, tmp_path):
    picture = Image.radial_gradient("L").resize((900, 700))
    picture.save(tmp_path / "photo.jpg")
    with pytest.raises(Unextractable, match="OCR found no text"):
        extract(tmp_path / "photo.jpg", engine)


def test_without_ocr_a_scan_and_an_image_say_why(tmp_path, monkeypatch):
    make_scan_pdf(tmp_path / "scan.pdf")
    make_page_image(tmp_path / "page.png")
    monkeypatch.setenv("CRAG_OCR", "false")
    for name in ("scan.pdf", "page.png"):
        with pytest.raises(Unextractable, match=r"OCR is off \(CRAG_OCR=false\)"):
            read_bounded((tmp_path / name).read_bytes(), FILE_TYPES[Path(name).suffix], "x")
    monkeypatch.delenv("CRAG_OCR")
    monkeypatch.setenv("CRAG_TESSERACT", str(tmp_path / "nowhere"))
    with pytest.raises(Unextractable, match="CRAG_TESSERACT is not a program"):
        read_bounded((tmp_path / "page.png").read_bytes(), "image", "page")
    assert configured_ocr().why_not


def _program(tmp_path, script):
    path = tmp_path / "tesseract"
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return ocr.OcrEngine(program=str(path))


def test_a_page_that_takes_too_long_is_ended_with_the_reason(tmp_path):
    slow = _program(tmp_path, "sleep 30")
    started = time.monotonic()
    with pytest.raises(ocr.OcrFailed, match="longer than 1 s"):
        ocr.read_image(Image.new("L", (2000, 2000), 255), slow, seconds=1)
    assert time.monotonic() - started < 5


def test_a_failing_ocr_program_is_a_damaged_file_with_its_message(tmp_path):
    broken = _program(tmp_path, "echo 'Error in pixReadMem: unknown format' >&2; exit 1")
    make_page_image(tmp_path / "page.png")
    with pytest.raises(Damaged, match="the image: tesseract failed .Error in pixReadMem"):
        extract(tmp_path / "page.png", broken)


def test_pages_are_read_within_the_pixel_budget():
    large = ocr._prepared(Image.new("RGB", (6000, 6000), "white"))
    assert large.mode == "L" and large.width * large.height <= ocr.OCR_PIXELS * 1.01
    small = ocr._prepared(Image.new("L", (700, 500), 255))
    assert small.size == (1400, 1000)


def test_a_huge_pdf_page_is_drawn_within_the_pixel_budget(engine, tmp_path, monkeypatch):
    drawn = []
    real = ocr.read_image

    def spy(image, engine, seconds, long=False):
        drawn.append(image.size)
        return real(image, engine, seconds, long)

    monkeypatch.setattr("crag_core.formats.extract.read_image", spy)
    (image,), (sentences,) = page_images(1)
    image.save(tmp_path / "poster.pdf", resolution=2.0)  # 620 x 877 inches at 2 dpi
    (section,) = extract(tmp_path / "poster.pdf", engine).sections
    ((width, height),) = drawn  # not 186,000 x 263,000 pixels (300 dpi)
    assert width * height <= ocr.OCR_PIXELS * 1.01
    assert recall(sentences, section.text) >= 0.95


def test_tesseract_words_become_paragraphs_with_boxes():
    tsv = "\t".join(
        "level page_num block_num par_num line_num word_num left top width height conf text".split()
    )
    rows = [
        (5, 1, 1, 1, 1, 10, 20, 30, 10, 96.0, "Flood"),
        (5, 1, 1, 1, 2, 50, 20, 40, 10, 95.0, "warning"),
        (5, 1, 1, 2, 1, 10, 40, 30, 10, 91.0, "today"),
        (5, 2, 1, 1, 1, 10, 80, 30, 10, 12.0, "~#"),  # noise: left out with its paragraph
        (5, 3, 1, 1, 1, 10, 90, 80, 10, 90.0, "Second"),
    ]
    for row in rows:
        tsv += "\n" + "\t".join(str(x) for x in (row[0], 1, *row[1:]))
    blocks = ocr.paragraphs(tsv, 100, 100)
    assert [b.text for b in blocks] == ["Flood warning\ntoday", "Second"]
    assert blocks[0].box == (0.1, 0.2, 0.9, 0.5)


def test_an_ingested_scan_and_photo_are_searchable_and_marked(engine, tmp_path):
    folder = tmp_path / "inbox"
    folder.mkdir()
    make_scan_pdf(folder / "letter.pdf")
    make_page_image(folder / "receipt.jpg")
    kb = KnowledgeBase(tmp_path / "chroma", "scans", HashEmbeddings())
    report = ingest(kb, [str(folder)])
    assert not report.failed and len(report.added) == 2
    got = kb.collection.get(include=["documents", "metadatas"])
    by_type = {(m["type"], m.get("page"), m.get("ocr")) for m in got["metadatas"]}
    assert by_type == {("pdf", 1, 1), ("image", None, 1)}
    assert any("Velna1x3 floods every spring" in d for d in got["documents"])


def test_the_cli_reports_a_scan_without_text_and_ingests_the_rest(hash_kb, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    make_page_image(folder / "page.png")
    Image.new("L", (800, 600), 255).save(folder / "blank.png")
    (folder / "broken.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    result = CliRunner().invoke(app, ["ingest", str(folder), "--collection", "scans"])
    assert result.exit_code == 1, result.output  # a damaged file fails the ingest
    assert "1 added" in result.output and "1 skipped, 1 failed" in result.output
    for name, said in [("blank.png", "skipped"), ("broken.jpg", "failed")]:
        line = next(line for line in result.output.splitlines() if name in line)
        assert line.startswith(said)
    assert "OCR found no text" in result.output and "unreadable image" in result.output


def test_an_image_is_checked_before_it_is_decoded():
    big = io.BytesIO()
    Image.new("1", (8_000, 6_000)).save(big, format="PNG")  # 48 million pixels, 6 KB
    started = time.monotonic()
    with pytest.raises(Damaged, match="8,000 x 6,000 pixels, more than 40 million"):
        read_bounded(big.getvalue(), "image", "big", ocr.OcrEngine(program="/bin/false"))
    assert time.monotonic() - started < 5


def test_an_uploaded_scan_is_read_by_ocr_once(engine, tmp_path, monkeypatch):
    import crag.ingest as ingestion

    reads = []

    def counted(data, kind, name, ocr=None):
        reads.append(name)
        return read_bounded(data, kind, name, ocr)

    monkeypatch.setattr("crag.ingest.read_bounded", counted)
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    make_scan_pdf(uploads / ".incoming-letter.pdf")
    kb = KnowledgeBase(tmp_path / "chroma", "uploads", HashEmbeddings())
    result = ingestion.add_upload(kb, uploads / ".incoming-letter.pdf", uploads / "letter.pdf")
    assert result["status"] == "added" and result["chunks"] >= 1
    assert reads == ["letter"]  # checked before it took its place, and not read again


NEWCASTLE = (  # SQuAD v1.1 dev (CC BY-SA 4.0): a page whose first lines Tesseract's layout misses
    "There are several museums and galleries in Newcastle, including the Centre for Life with its "
    "Science Village; the Discovery Museum a museum highlighting life on Tyneside, including "
    "Tyneside's shipbuilding heritage, and inventions which changed the world; the Great North "
    "Museum; in 2009 the Newcastle on Tyne Museum of Antiquities merged with the Great North "
    "Museum (Hancock Museum); Seven Stories a museum dedicated to children's books, the Side "
    "Gallery historical and contemporary photography from around the world and Northern England "
    "and the Newburn Hall Motor Museum."
)


@pytest.fixture(scope="module")
def grainy_scan(tmp_path_factory):
    """The page above as a scanner gives it: turned 1.5 degrees, grainy, JPEG."""
    from benchmarks.measurements.ocr import draw, typeset

    pdf = tmp_path_factory.mktemp("scan") / "newcastle.pdf"
    typeset("Newcastle upon Tyne", NEWCASTLE, 1, pdf)
    return draw(pdf, 300, scanned=True)


def test_lines_the_layout_misses_are_read_on_a_second_look(engine, grainy_scan, monkeypatch):
    reference = f"Newcastle upon Tyne\n{NEWCASTLE}"
    blocks = ocr.read_image(grainy_scan, engine)
    text = "\n".join(b.text for b in blocks)
    assert word_accuracy(reference, text) >= 0.97, text
    assert text.startswith("Newcastle upon Tyne\nThere are several museums")  # in its place
    left, top, _, bottom = blocks[0].box  # placed where it is on the page: top left
    assert left < 0.1 and top < 0.1 and bottom < 0.15, blocks[0].box
    monkeypatch.setattr(ocr, "MAX_SECOND_LOOKS", 0)  # what the first reading alone misses
    first = "\n".join(b.text for b in ocr.read_image(grainy_scan, engine))
    assert "There are several" not in first and word_accuracy(reference, first) < 0.9


def test_unread_ink_is_cut_into_bands_by_rows_and_columns():
    from PIL import ImageDraw

    page = Image.new("L", (1000, 1000), 255)
    pen = ImageDraw.Draw(page)
    for left, top, right in [(100, 100, 900), (100, 200, 400), (600, 200, 900)]:
        for x in range(left, right, 5):  # a read line, then two columns' unread lines
            pen.line((x, top, x, top + 30), fill=0, width=1)
    pen.line((100, 500, 900, 500), fill=0, width=2)  # a rule: too thin to be text
    pen.point((50, 900), fill=0)  # a speck
    pen.rectangle((100, 700, 400, 760), fill=0)  # a dark figure: too much ink to be text
    bands = ocr.unread_bands(page, [(0.1, 0.1, 0.9, 0.13)])
    assert sorted((b.left, b.top, b.right, b.bottom) for b in bands) == [
        (88, 188, 408, 243),
        (588, 188, 908, 243),
    ]
    assert bands[0].crop().getextrema() == (0, 255)  # the unread ink, on white
    assert ocr.unread_bands(page, [(0.1, 0.1, 0.9, 0.13), (0.1, 0.2, 0.9, 0.23)]) == []


def test_a_second_look_goes_before_the_first_block_below_it_in_its_column():
    def block(text, box):
        return ocr.Block(((text, box),))

    read = [block("left top", (0.1, 0.3, 0.45, 0.35)), block("right", (0.55, 0.2, 0.9, 0.25))]
    found = [block("title", (0.1, 0.1, 0.9, 0.15)), block("left end", (0.1, 0.8, 0.45, 0.85))]
    placed = ocr._in_place(read, found)
    assert [b.text for b in placed] == ["title", "left top", "right", "left end"]


def test_a_second_look_keeps_to_the_page_deadline(tmp_path, grainy_scan):
    calls = tmp_path / "calls"
    slow = _program(tmp_path, f"echo call >> {calls}; cat > /dev/null; sleep 2; printf 'level\\n'")
    started = time.monotonic()
    assert ocr.read_image(grainy_scan, slow, seconds=2.5) == []
    assert time.monotonic() - started < 4 and calls.read_text().count("call") == 1


def test_a_page_stopped_at_its_cpu_limit_says_so(tmp_path):
    from crag_core.formats.ocr import OcrEngine, OcrFailed, _tesseract

    spinner = tmp_path / "tesseract"
    spinner.write_text("#!/bin/sh\nwhile :; do :; done\n")
    spinner.chmod(0o755)
    with pytest.raises(OcrFailed, match="used its 1 s of CPU"):
        _tesseract(b"P5 1 1 255\n\0", OcrEngine(program=str(spinner)), seconds=1)
