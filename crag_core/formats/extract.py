"""Text out of the files people keep: every type of ``FILE_TYPES``.

``extract(path)`` returns the document's title, its type and its text as sections that keep the
file's own structure: a PDF's pages (``page``), or the heading path of Markdown, HTML and Word
documents (``heading``, e.g. "Install > Linux"). A file that has no usable text raises
``Unextractable`` with the reason (encrypted, no text layer, binary, not UTF-8, empty…); a
damaged or hostile one raises ``Damaged``: its reader failed, or it went past a bound.

Every reader is bounded by what it produces, never by what a file declares: an archive's size
and member count are checked before unpacking, a page's elements before parsing, a sheet's
cells as they are read, and the text as it is built (``TextBudget``). A spreadsheet's text
names its columns once per chunk-sized block (``table_blocks``), so it grows with its cells,
not its header times its rows. Markdown is read line by line, in time linear in its length
whatever it holds. (The memory and time a library takes inside are bounded per file by
``crag_core.formats.isolated``.)

Libraries (``READERS`` maps each type to its reader): pypdf for PDF text layers, BeautifulSoup
(lxml parser) for HTML, python-docx for Word (chosen by
``benchmarks/measurements/extraction.py``); markitdown for slides, EPUB and notebooks (chosen by
``benchmarks/measurements/converters.py``), openpyxl for workbooks (read-only, row by row),
docutils for reStructuredText; CSV (the ``csv`` module), plain text and Markdown are read here.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from io import BytesIO
from pathlib import Path
from typing import Any

from crag_core.formats.ocr import (
    OCR_DPI,
    OCR_PIXELS,
    QUICK_PAGES,
    OcrEngine,
    OcrFailed,
    ocr_engine,
    read_image,
)
from crag_core.formats.table_rows import (
    MAX_COLUMNS,
    csv_rows,
    document_tables,
    is_rule_row,
    pipe_cells,
    pipe_tables,
    table_from_rows,
)
from crag_core.text.catalog import FILE_TYPES as FILE_TYPES  # the suffixes read here
from crag_core.text.regions import Line
from crag_core.text.table_shapes import Table

MAX_FILE_BYTES = 20 * 1024 * 1024
"""Larger files are refused (a knowledge base of manuals, not of data dumps)."""
MAX_TEXT_CHARS = 2_000_000
"""A file whose text is longer is refused: about 2,900 chunks, half a minute of embedding here
(a 600-page book); more is a data dump or a file built to expand."""
MAX_UNPACKED_BYTES = 64 * 1024 * 1024
"""The most a .docx, .pptx, .xlsx or .epub (each a zip archive) may unpack to, by its own
directory, checked before anything is unpacked (the parsers hold the XML in memory: a 4 MiB
Word body took 40 MB here)."""
MAX_MEMBERS = 5_000
"""The most files such an archive may hold."""
MAX_CELLS = 2_000_000
"""The most cells a workbook's sheet may produce, counted as read (a row padded out to its
last cell counts every cell of it; a missing row counts one), never as the sheet declares."""
MAX_PAGES = 2_000
"""The most pages a PDF may have."""
MAX_OCR_PAGES = 60
"""The most pages of one file read by OCR (a scanned PDF's pages, a TIFF's frames): about 90 s
of OCR here."""
OCR_SECONDS = 100.0
"""The most the OCR of one file's pages may take together (within the reader's deadline)."""
PDF_TABLE_SECONDS = 20.0
"""The most looking for a PDF's tables may take (about 8 ms a page of text here)."""
MAX_PAGE_LINES = 2_000
"""The most text runs of one PDF page given a place (a page of tiny print has a few hundred)."""
WHOLE_TABLE_SHARE = 2 / 3
"""A document whose tables hold at least this share of its text's characters is its tables
(``with_whole_tables``). The R tables typeset in PDFs under a caption: 0.76 to 1.0; the R
documentation pages, each a text with its table of variables: 0.04 to 0.56."""
MIN_TEXT_LAYER_CHARS = 20
"""A PDF page whose text layer has fewer characters (not counting spaces) is read by OCR."""
MAX_IMAGE_PIXELS = 40_000_000
"""The most pixels an image file (each frame) may declare: a 40-megapixel photo, an A3 page at
400 dpi; checked in its header before a pixel is decoded."""
MAX_HTML_ELEMENTS = 200_000
"""The most elements a web page (or an EPUB's chapters together) may open: the parsed tree
costs about 1 KiB an element, so this keeps it near 200 MiB (a long article has a few thousand)."""
MAX_NAME_IN_ROW = 40
"""A column's name as a row of a table inside a document repeats it ("name: cell") is cut to
this many characters, so the table's text grows with its cells, not its header times its rows."""
TABLE_BLOCK_CHARS = 700
"""A spreadsheet's text (a CSV file, a workbook's sheet) is its rows in blocks of about this
many characters, each block opened by the header line: one block is one chunk (crag.ingest
cuts at 800), so every chunk names its columns once, however many rows the table has."""
MAX_HEADER_CHARS = 240
"""A block's header line is cut to this many characters: the header's share of a block."""
ARCHIVES = frozenset({"docx", "pptx", "xlsx", "epub"})
"""The file types that are zip archives."""


HTML_NOISE = ("script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form")
"""HTML elements that are page furniture, not content."""

_MD_HEADING = re.compile(r"(#{1,6})[ \t]+(\S.*)")
_MD_LINE = re.compile(r".*(?:\n|\Z)")


class Unextractable(Exception):
    """A file with no text crag can use; the message says why."""


class Damaged(Unextractable):
    """A damaged or hostile file: its reader failed on it, or it went past a bound.

    The message says which, in a few words.
    """


class TextBudget:
    """The characters a file's text may take (``MAX_TEXT_CHARS``), counted as it is built.

    A reader passes each piece it keeps through ``take``; the piece that goes past the cap
    raises ``Damaged`` before the text grows further, so no reader builds more text than the
    cap, whatever the file declares or repeats.
    """

    def __init__(self) -> None:
        self.limit = MAX_TEXT_CHARS
        self.used = 0

    def take(self, text: str) -> str:
        """``text``, counted; ``Damaged`` when the file's text goes past the cap."""
        self.used += len(text)
        if self.used > self.limit:
            raise too_long()
        return text


def too_long() -> Damaged:
    """The refusal of a file whose text is past ``MAX_TEXT_CHARS``."""
    return Damaged(f"its text is more than {MAX_TEXT_CHARS:,} characters long (split the file)")


@dataclass(frozen=True)
class Section:
    """A run of text and where it sits in its file."""

    text: str
    page: int | None = None
    """1-based page of a PDF."""
    heading: str = ""
    """The headings above the text, outermost first, joined by " > "."""
    ocr: bool = False
    """Read off the page's image by OCR (a scanned page, an image file), not from its text."""
    lines: tuple[Line, ...] = ()
    """The page's lines and where each is on it (PDF pages and images), for ``region``."""


@dataclass(frozen=True)
class Extracted:
    """A file's title, its type, its text in sections, and its tables.

    Tables: a CSV file's, each sheet of a workbook, and the tables with a header row of a web
    page, Markdown or Word document.
    """

    title: str
    file_type: str
    sections: list[Section]
    tables: tuple[Table, ...] = ()


def file_type(path: Path) -> str | None:
    """The recorded type of ``path`` (``None``: not a supported type)."""
    return FILE_TYPES.get(path.suffix.lower())


def extract(path: Path, ocr: OcrEngine | None = None) -> Extracted:
    """The text of ``path`` in sections; ``Unextractable`` if there is none to use."""
    kind, data = read_file(path)
    return extract_data(data, kind, path.stem, ocr)


def configured_ocr() -> OcrEngine:
    """The OCR engine the settings give (``CRAG_OCR``, ``CRAG_TESSERACT``)."""
    from crag_core.settings import settings

    given = settings()
    return ocr_engine(given.ocr, given.tesseract)


def read_file(path: Path) -> tuple[str, bytes]:
    """The type and bytes of ``path``; ``Unextractable`` for an unsupported or too large one."""
    kind = file_type(path)
    if kind is None:
        raise Unextractable(f"unsupported file type {path.suffix or '(none)'!r}")
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise Unextractable(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        return kind, path.read_bytes()
    except OSError as exc:
        raise Unextractable(f"cannot read: {exc.strerror or exc}") from exc


def extract_data(data: bytes, kind: str, name: str, ocr: OcrEngine | None = None) -> Extracted:
    """The text of a file of type ``kind`` whose bytes are ``data`` (``name``: its stem).

    Scanned pages and images are read with ``ocr`` (default: ``configured_ocr()``).
    """
    if not data.strip():
        raise Unextractable("empty file")
    if kind in ARCHIVES:
        check_archive(data, kind)
    try:
        if kind in PAGE_IMAGE_READERS:
            extracted = PAGE_IMAGE_READERS[kind](data, name, ocr or configured_ocr())
        else:
            extracted = READERS[kind](data, name)
    except Unextractable:
        raise
    except RecursionError as exc:
        raise Damaged(f"unreadable {kind} file: nested too deeply") from exc
    except MemoryError as exc:
        raise Damaged(f"unreadable {kind} file: too large to read in memory") from exc
    except Exception as exc:  # each parser has its own errors for a damaged file
        raise Damaged(f"unreadable {kind} file ({type(exc).__name__})") from exc
    if not any(s.text.strip() for s in extracted.sections):
        raise Unextractable("no text in the file")
    length = sum(len(s.text) for s in extracted.sections)
    if length > MAX_TEXT_CHARS:
        raise Damaged(
            f"its text is {length:,} characters long, more than {MAX_TEXT_CHARS:,} (split the file)"
        )
    return with_whole_tables(extracted)


def with_whole_tables(extracted: Extracted) -> Extracted:
    """``extracted`` with its tables marked ``whole`` when they are most of its text.

    A PDF or page that is a table under a caption (a statement, a report's table exported
    alone) is queried as a spreadsheet is; a table inside a text (a page's table of
    parameters) stays incidental to it. Characters are counted without spaces.
    """
    if not extracted.tables or all(t.whole for t in extracted.tables):
        return extracted
    text = sum(_printed(s.text) for s in extracted.sections)
    cells = sum(
        _printed(str(v))
        for table in extracted.tables
        for v in (*(c.original for c in table.columns), *(v for row in table.rows for v in row))
        if v is not None
    )
    if cells < WHOLE_TABLE_SHARE * text:
        return extracted
    whole = tuple(replace(t, whole=True) for t in extracted.tables)
    return replace(extracted, tables=whole)


def check_archive(data: bytes, kind: str) -> None:
    """``Damaged`` unless the zip archive ``data`` is within ``MAX_MEMBERS`` and the size cap.

    Read from its directory before anything is unpacked (``MAX_UNPACKED_BYTES``).
    The sizes it declares are the most Python's zip reader ever unpacks of each member, so
    the parsers behind it stay within them too.
    """
    from zipfile import BadZipFile, ZipFile

    try:
        with ZipFile(BytesIO(data)) as archive:
            members = archive.infolist()
    except (BadZipFile, OSError, ValueError, EOFError) as exc:
        raise Damaged(f"unreadable {kind} file: not a zip archive") from exc
    if len(members) > MAX_MEMBERS:
        raise Damaged(f"it holds {len(members):,} files, more than {MAX_MEMBERS:,}")
    unpacked = sum(m.file_size for m in members)
    if unpacked > MAX_UNPACKED_BYTES:
        raise Damaged(
            f"it unpacks to {unpacked / 2**20:,.1f} MiB, more than {MAX_UNPACKED_BYTES >> 20} MiB"
        )
    if kind == "epub":
        _check_chapters(data, members)


def _check_chapters(data: bytes, members: list[Any]) -> None:
    """``Damaged`` when an EPUB's chapters together open more than ``MAX_HTML_ELEMENTS``.

    Its pages are HTML, each parsed into a tree; they compress about 100x, so the count is
    taken on the unpacked bytes (within ``MAX_UNPACKED_BYTES``), a member at a time.
    """
    from zipfile import ZipFile

    opened = 0
    with ZipFile(BytesIO(data)) as archive:
        for member in members:
            if member.filename.lower().endswith((".html", ".xhtml", ".htm")):
                opened += _opened_elements(archive.read(member))
                if opened > MAX_HTML_ELEMENTS:
                    raise Damaged(f"its pages have more than {MAX_HTML_ELEMENTS:,} HTML elements")


def _decode(data: bytes) -> str:
    if b"\x00" in data:
        raise Unextractable("binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unextractable(f"not UTF-8 text (byte {exc.start})") from exc


def _text(data: bytes, name: str) -> Extracted:
    return Extracted(name, "text", [Section(_decode(data))])


def _markdown(data: bytes, name: str) -> Extracted:
    """Markdown cut at its headings: each section starts with its heading line."""
    text = _decode(data)
    tables = document_tables(name, pipe_tables(text))
    return Extracted(markdown_title(text) or name, "markdown", markdown_sections(text), tables)


def markdown_title(text: str) -> str:
    """The first level-1 heading of ``text`` outside code fences ("" if none)."""
    return next((h.title for h in _markdown_headings(text) if h.level == 1), "")


@dataclass(frozen=True)
class _Heading:
    start: int
    end: int
    level: int
    title: str


def _markdown_headings(text: str) -> list[_Heading]:
    """The ATX headings of ``text`` outside fenced code, in one pass over its lines.

    A fence opens at a line starting with ``` or ~~~ and closes at the next line holding only
    the same three characters; one that never closes is not a fence. Line by line, so the
    time is linear in the text whatever it holds (a pattern over the whole text was
    quadratic on unclosed fences and long runs of spaces).
    """
    lines = [(m.start(), m.group()) for m in _MD_LINE.finditer(text) if m.group()]
    closers: dict[str, list[int]] = {"```": [], "~~~": []}
    for i, (_start, line) in enumerate(lines):
        if line.rstrip() in closers:
            closers[line.rstrip()].append(i)
    heads: list[_Heading] = []
    i = 0
    while i < len(lines):
        start, line = lines[i]
        marker = line[:3]
        if marker in closers:
            after = bisect.bisect_right(closers[marker], i)
            if after < len(closers[marker]):
                i = closers[marker][after] + 1  # the whole fence is code
                continue
        found = _MD_HEADING.match(line.rstrip("\n"))
        title = found.group(2).rstrip().rstrip("#").rstrip() if found else ""
        if found and title:
            heads.append(_Heading(start, start + len(line), len(found.group(1)), title))
        i += 1
    return heads


def markdown_sections(text: str) -> list[Section]:
    """``text`` cut at its ATX headings, each section with its heading path.

    A ``#`` line inside a fenced code block is code, not a heading. The heading line stays in
    its section's text, so a chunk says what it is about even when read alone.
    """
    heads = _markdown_headings(text)
    sections: list[Section] = []
    path: list[str] = []
    cuts = [0, *(h.start for h in heads), len(text)]
    for i, (start, end) in enumerate(itertools.pairwise(cuts)):
        body_start = start
        if i:  # the section opened by heading i - 1
            head = heads[i - 1]
            path, body_start = [*path[: head.level - 1], head.title], head.end
        if text[body_start:end].strip():  # a heading with nothing under it is left out
            sections.append(Section(text[start:end].strip(), heading=" > ".join(path)))
    return sections


def _pdf(data: bytes, name: str, ocr: OcrEngine) -> Extracted:
    """A PDF's text layer page by page; a page with (almost) none is read by OCR."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unextractable("encrypted PDF (it needs a password)")
        if len(reader.pages) > MAX_PAGES:
            raise Damaged(f"it has {len(reader.pages):,} pages, more than {MAX_PAGES:,}")
        budget = TextBudget()
        pages = [budget.take(page.extract_text() or "") for page in reader.pages]
        title = str(reader.metadata.title or "").strip() if reader.metadata else ""
    except (PdfReadError, ValueError, KeyError) as exc:
        raise Unextractable(f"unreadable PDF: {exc}") from exc
    import pypdfium2 as pdfium

    texts = [i for i, t in enumerate(pages, start=1) if _has_text(t)]
    scanned = [i for i in range(1, len(pages) + 1) if i not in texts]
    document = pdfium.PdfDocument(data)  # its lines' places, and its scans drawn for OCR
    try:
        placed = _pdf_lines(document, texts)
        sections = {i: Section(pages[i - 1], page=i, lines=placed[i]) for i in texts}
        if scanned and ocr.program:
            sections |= _ocr_pages(document, scanned, ocr, budget)
    finally:
        document.close()
    if not sections:
        if not ocr.program:
            raise Unextractable(f"PDF without a text layer (scanned?); {ocr.why_not}")
        raise Unextractable(
            f"PDF without a text layer, and OCR found no text on its {len(pages):,} "
            + ("page" if len(pages) == 1 else "pages")
        )
    text_pages = [i for i in sorted(sections) if not sections[i].ocr]
    tables = document_tables(name, _pdf_tables(data, text_pages))
    return Extracted(title or name, "pdf", [sections[i] for i in sorted(sections)], tables)


def _pdf_tables(data: bytes, pages: list[int]) -> list[tuple[str, list[list[str]]]]:
    """The ruled tables on the PDF's text ``pages`` (pdfplumber), each with its place.

    A place is "page 3 table 1". Looked for within ``PDF_TABLE_SECONDS`` (the pages after it
    keep their text, without tables); a table is its cells as read (``pdf_cell``).
    """
    import pdfplumber

    found: list[tuple[str, list[list[str]]]] = []
    reached = 0  # the page the last table found ends on
    started = time.monotonic()
    with pdfplumber.open(BytesIO(data)) as document:
        for number in pages:
            if time.monotonic() - started > PDF_TABLE_SECONDS:
                break
            page = document.pages[number - 1]
            for n, table in enumerate(page.find_tables(), start=1):
                rows = [[pdf_cell(c or "") for c in row] for row in table.extract()]
                if n == 1 and found and reached == number - 1 and _same_header(found[-1][1], rows):
                    found[-1][1].extend(rows[1:])  # over a page break, under its header again
                else:
                    found.append((f"page {number} table {n}", rows))
                reached = number
            page.close()
    return found


def pdf_cell(text: str) -> str:
    """A PDF table cell's text: its lines joined by a space, but not at a hyphen.

    A narrow column wraps a date or a hyphenated word at its hyphen ("2010-08" / "-01",
    "well-" / "known"): those lines are joined as they were written.
    """
    joined = ""
    for line in text.split("\n"):
        line = " ".join(line.split())
        if not line:
            continue
        glued = not joined or joined.endswith("-") or line.startswith("-")
        joined += line if glued else f" {line}"
    return joined


def _same_header(before: list[list[str]], rows: list[list[str]]) -> bool:
    return bool(before and rows and rows[0] == before[0] and any(rows[0]))


def _pdf_lines(document: Any, pages: list[int]) -> dict[int, tuple[Line, ...]]:
    """The text runs (about a line each) of the pdfium ``document``'s ``pages``, placed."""
    placed: dict[int, tuple[Line, ...]] = {}
    for number in pages:
        page = document[number - 1]
        width, height = page.get_size()
        text = page.get_textpage()
        lines = []
        for i in range(min(text.count_rects(), MAX_PAGE_LINES)):
            left, bottom, right, top = text.get_rect(i)
            box = (left / width, 1 - top / height, right / width, 1 - bottom / height)
            lines.append((text.get_text_bounded(left, bottom, right, top), _clamped(box)))
        placed[number] = tuple(lines)
    return placed


def _clamped(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    left, top, right, bottom = (min(1.0, max(0.0, v)) for v in box)
    return (left, top, right, bottom)


def _has_text(text: str) -> bool:
    return _printed(text) >= MIN_TEXT_LAYER_CHARS


def _printed(text: str) -> int:
    """The characters of ``text`` that are not spaces."""
    return len("".join(text.split()))


def _ocr_pages(
    document: Any, pages: list[int], ocr: OcrEngine, budget: TextBudget
) -> dict[int, Section]:
    """The 1-based ``pages`` of the pdfium ``document`` drawn at ``OCR_DPI`` and read by OCR."""
    _within_ocr_pages(len(pages), ocr, "of its pages have no text layer")
    started = time.monotonic()
    read: dict[int, Section] = {}
    for done, number in enumerate(pages):
        left = _ocr_time_left(started, len(pages), done)
        page = document[number - 1]
        width, height = page.get_size()
        scale = min(OCR_DPI / 72, (OCR_PIXELS / max(1.0, width * height)) ** 0.5)
        image = page.render(scale=scale, grayscale=True).to_pil()
        long = done >= QUICK_PAGES
        section = _ocr_section(image, ocr, left, f"page {number}", number, budget, long)
        if section is not None:
            read[number] = section
    return read


def _within_ocr_pages(pages: int, ocr: OcrEngine, what: str) -> None:
    """``Damaged`` when a file needs OCR of more pages than a file, or the reader, may have."""
    if pages > MAX_OCR_PAGES:
        raise Damaged(
            f"{pages:,} {what}; OCR reads at most {MAX_OCR_PAGES} pages of a file (split it)"
        )
    if ocr.pages is not None and pages > ocr.pages:
        raise Damaged(f"{pages:,} {what}, more than OCR may read now: {ocr.allowance}")


def _ocr_time_left(started: float, pages: int, done: int) -> float:
    """The seconds left of ``OCR_SECONDS`` for a file's OCR; ``Damaged`` when none are."""
    left = OCR_SECONDS - (time.monotonic() - started)
    if left <= 0:
        raise Damaged(
            f"OCR of its {pages:,} pages takes more than {OCR_SECONDS:.0f} s "
            f"({done} read; split the file)"
        )
    return left


def _ocr_section(
    image: Any,
    ocr: OcrEngine,
    seconds: float,
    where: str,
    page: int | None,
    budget: TextBudget,
    long: bool = False,
) -> Section | None:
    """The section OCR reads on ``image`` (its paragraphs, its lines' boxes); ``None``: no text.

    ``long``: a page of a long scan, read in OCR's long lane (``ocr.read_image``).
    """
    try:
        blocks = read_image(image, ocr, seconds, long)
    except OcrFailed as exc:
        raise Damaged(f"{where}: {exc}") from exc
    text = "\n\n".join(b.text for b in blocks)
    if not text:
        return None
    lines = tuple(line for b in blocks for line in b.lines)
    return Section(budget.take(text), page=page, ocr=True, lines=lines)


def _image(data: bytes, name: str, ocr: OcrEngine) -> Extracted:
    """An image file (each frame of a TIFF a page) read by OCR, its size checked first.

    The size an image declares is read from its header and refused past ``MAX_IMAGE_PIXELS``
    before any pixel is decoded, frame by frame.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        image = Image.open(BytesIO(data))
    except Image.DecompressionBombError as exc:  # Pillow's own guard, at 2 x 89 million
        most = 2 * (Image.MAX_IMAGE_PIXELS or 0) // 1_000_000
        raise Damaged(
            f"it declares more than {most:,} million pixels, more than "
            f"{MAX_IMAGE_PIXELS // 1_000_000} million"
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise Damaged(
            "unreadable image (not a PNG, JPEG, TIFF, WebP or BMP it can decode)"
        ) from exc
    frames = int(getattr(image, "n_frames", 1))
    _within_ocr_pages(frames, ocr, "pages are in it")
    if not ocr.program:
        raise Unextractable(f"an image: its text needs OCR, and {ocr.why_not}")
    started = time.monotonic()
    sections: list[Section] = []
    budget = TextBudget()
    for frame in range(frames):
        image.seek(frame)
        width, height = image.size
        if width * height > MAX_IMAGE_PIXELS:
            raise Damaged(
                f"it declares {width:,} x {height:,} pixels, more than "
                f"{MAX_IMAGE_PIXELS // 1_000_000} million"
            )
        left = _ocr_time_left(started, frames, frame)
        image.draft(
            "L", (width // 2, height // 2) if width * height > OCR_PIXELS else (width, height)
        )
        where = f"page {frame + 1}" if frames > 1 else "the image"
        number = frame + 1 if frames > 1 else None
        section = _ocr_section(image, ocr, left, where, number, budget, frame >= QUICK_PAGES)
        if section is not None:
            sections.append(section)
    if not sections:
        raise Unextractable("an image in which OCR found no text")
    return Extracted(name, "image", sections)


_HTML_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_HTML_BLOCKS = {
    *("p", "li", "dd", "div", "section", "article", "main", "body", "ul", "ol", "dl", "table"),
    *("thead", "tbody", "tfoot", "blockquote", "figure", "figcaption", "caption", "details"),
    *("summary", "header", "address", "center", "td", "th"),
}


PREVIEW_WIDTH = 900
"""How wide a page is drawn for the page (pixels)."""
PREVIEW_PIXELS = 12_000_000
"""The most pixels a drawn page may have, and an image file may declare to be shown: a PDF
page is drawn narrower to fit (checked from its size before drawing), an image past it is
refused before a pixel is decoded."""
MIN_PREVIEW_WIDTH = 64
"""A page that fits ``PREVIEW_PIXELS`` only narrower than this is refused (a strip)."""


def draw_page(data: bytes, kind: str, page: int | None, width: int = PREVIEW_WIDTH) -> bytes:
    """Page ``page`` (1-based) of the PDF or image file ``data`` drawn as a PNG.

    ``Unextractable`` with the reason for a page that is not there or cannot be shown. The
    size is checked before drawing; callers draw a stranger's file in a reader child
    (``crag_core.formats.isolated.draw_bounded``), whose ceiling bounds what drawing needs.
    """
    if kind == "pdf":
        return _pdf_page_png(data, page or 1, width)
    return _image_page_png(data, page, width)


def _pdf_page_png(data: bytes, page: int, width: int) -> bytes:
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(data)
    except (pdfium.PdfiumError, OSError) as exc:
        raise Unextractable(f"cannot open the PDF: {exc}") from exc
    try:
        if not 1 <= page <= len(document):
            raise Unextractable(f"the PDF has no page {page}")
        sheet = document[page - 1]
        points_wide, points_high = sheet.get_size()
        area = max(1.0, points_wide) * max(1.0, points_high)
        # 0.96: the drawing rounds each side up, at most 1/64 more of the narrower side
        scale = min(width / max(1.0, points_wide), (0.96 * PREVIEW_PIXELS / area) ** 0.5)
        if points_wide * scale < MIN_PREVIEW_WIDTH:
            raise Unextractable(
                f"its page is {points_wide:,.0f} x {points_high:,.0f} points, too large to show"
            )
        try:
            image = sheet.render(scale=scale).to_pil()
        except (pdfium.PdfiumError, RecursionError, MemoryError, SystemError) as exc:
            raise Unextractable(f"its page cannot be drawn ({type(exc).__name__})") from exc
        out = BytesIO()
        image.save(out, format="PNG", optimize=True)
        return out.getvalue()
    finally:
        document.close()


def _image_page_png(data: bytes, page: int | None, width: int) -> bytes:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(BytesIO(data)) as image:
            if page is not None:
                image.seek(page - 1)
            if image.width * image.height > PREVIEW_PIXELS:
                raise Unextractable("the image is too large to show")
            image.draft("RGB", (width, width * image.height // max(1, image.width)))
            shown = image.convert("RGB")
            shown.thumbnail((width, 10 * width))
            out = BytesIO()
            shown.save(out, format="PNG", optimize=True)
            return out.getvalue()
    except (UnidentifiedImageError, OSError, EOFError, ValueError) as exc:
        raise Unextractable(f"cannot open the image: {exc}") from exc
    except Image.DecompressionBombError as exc:
        raise Unextractable("the image is too large to show") from exc


def _html(data: bytes, name: str) -> Extracted:
    """A web page's main text in sections cut at its headings.

    Kept: headings, paragraphs, list items, code blocks, definition lists (a term such as an
    API signature ``lru_cache(maxsize=128, typed=False)`` and its description), table rows
    with their column headers ("gauge: Velna bridge | level: 4.2 m"), captions and images'
    alt text. Dropped: furniture (``HTML_NOISE``) and permalink marks.
    """
    from bs4 import BeautifulSoup

    check_elements(data)
    soup = BeautifulSoup(data, "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(HTML_NOISE):
        tag.decompose()
    for tag in soup.select("a.headerlink"):
        tag.decompose()
    for img in soup.find_all("img"):
        alt = str(img.get("alt") or "").strip()
        img.replace_with(f" [image: {alt}] " if alt else "")
    for br in soup.find_all("br"):
        br.replace_with("\n")
    content = soup.find("main") or soup.find("article") or soup.body or soup
    reader = _HtmlReader(TextBudget())
    reader.read(content)
    reader.cut()
    heads = reader.heads
    tables = document_tables(name, [_html_table(t) for t in content.find_all("table")])
    return Extracted(title or (heads[0] if heads else name), "html", reader.sections, tables)


def _html_table(table: Any) -> tuple[str, list[list[str]]]:
    """A table's caption (or "") and its rows' cells (a nested table's rows are its own)."""
    caption = table.find("caption")
    rows = [
        [_words(c) for c in tr.find_all(["td", "th"], recursive=False)]
        for tr in table.find_all("tr")
        if tr.find_parent("table") is table
    ]
    return (_words(caption) if caption else ""), rows


def _words(el: Any, joiner: str = " ") -> str:
    return " ".join(str(el.get_text(joiner)).split())


class _HtmlReader:
    """Walks a page's blocks in order, collecting lines under the heading path."""

    def __init__(self, budget: TextBudget) -> None:
        self.sections: list[Section] = []
        self.heads: list[str] = []
        self.lines: list[str] = []
        self.budget = budget

    def add(self, line: str) -> None:
        self.lines.append(self.budget.take(line))

    def cut(self) -> None:
        if self.lines:
            self.sections.append(Section("\n".join(self.lines), heading=" > ".join(self.heads)))
            self.lines = []

    def read(self, node: Any) -> None:
        """Read ``node``'s children: inline text gathers into a line, each block is its own."""
        inline: list[str] = []

        def flush() -> None:
            line = " ".join("".join(inline).split())
            if line:
                self.add(line)
            inline.clear()

        for child in node.children:
            name = getattr(child, "name", None)
            if name is None:
                inline.append(str(child))
            elif name in _HTML_HEADINGS:
                flush()
                self.cut()
                self.heads = [*self.heads[: int(name[1]) - 1], _words(child)]
            elif name == "pre":
                flush()
                self.add(str(child.get_text()).strip())
            elif name == "dt":  # a term; in API docs a signature, its pieces joined as written
                flush()
                self.add(_words(child, ""))
            elif name == "tr":
                flush()
                self.add(_html_row(child))
            elif name in _HTML_BLOCKS:
                flush()
                self.read(child)
            else:
                inline.append(str(child.get_text("")))
        flush()


def _html_row(tr: Any) -> str:
    """A table row; a data row under a header row names each cell's column."""
    cells = [_words(c) for c in tr.find_all(["td", "th"], recursive=False)]
    if not any(cells) or tr.find("td", recursive=False) is None:
        return " | ".join(c for c in cells if c)  # a header row is read as it is
    table = tr.find_parent("table")
    header = table.find("tr") if table is not None else None
    names = []
    if header is not None and header is not tr and header.find("td", recursive=False) is None:
        names = [_words(c) for c in header.find_all("th", recursive=False)]
    return named_row(names, cells)


def named_row(names: list[str], cells: list[str]) -> str:
    """A table row with each cell after its column's name: "gauge: Velna bridge | level: 4.2 m".

    A cell whose column has no name stands alone; without a name for every cell, the cells
    alone. So a chunk cut from the middle of a long table still says what its numbers are.
    """
    if len(names) != len(cells):
        return " | ".join(cells)
    return " | ".join(f"{_short(n)}: {c}" if n else c for n, c in zip(names, cells, strict=True))


def _short(name: str) -> str:
    """A column's name as each row repeats it: at most ``MAX_NAME_IN_ROW`` characters."""
    return name if len(name) <= MAX_NAME_IN_ROW else name[: MAX_NAME_IN_ROW - 1] + "…"


def table_blocks(rows: Iterable[list[str]], budget: TextBudget) -> list[str]:
    """A spreadsheet's rows as text: blocks of ``TABLE_BLOCK_CHARS``, each under the header.

    The first row with a filled cell is the header; each block opens with its line (cut to
    ``MAX_HEADER_CHARS``) and holds the rows that fit (one at least), cells joined by " | ",
    an empty cell kept in its place. Each block becomes a section of its own, so the chunker
    never joins two. Rows with no filled cell are left out; a header alone is one block.
    """
    blocks: list[str] = []
    header = ""
    block: list[str] = []
    size = 0
    for row in rows:
        if not any(row):
            continue
        line = " | ".join(row).rstrip(" |")
        if not header:
            header = line if len(line) <= MAX_HEADER_CHARS else line[: MAX_HEADER_CHARS - 1] + "…"
            continue
        if block and size + len(line) + 1 > TABLE_BLOCK_CHARS:
            blocks.append(budget.take("\n".join(block)))
            block, size = [], 0
        if not block:
            block, size = [header], len(header)
        block.append(line)
        size += len(line) + 1
    if block:
        blocks.append(budget.take("\n".join(block)))
    return blocks if blocks or not header else [budget.take(header)]


def check_elements(html: bytes) -> None:
    """``Damaged`` when ``html`` opens more than ``MAX_HTML_ELEMENTS`` elements.

    Counted on the bytes (each ``<`` that opens a tag), before a parser builds a tree of them.
    """
    opened = _opened_elements(html)
    if opened > MAX_HTML_ELEMENTS:
        raise Damaged(f"the page has {opened:,} HTML elements, more than {MAX_HTML_ELEMENTS:,}")


def _opened_elements(html: bytes) -> int:
    return html.count(b"<") - html.count(b"</") - html.count(b"<!") - html.count(b"<?")


def _docx(data: bytes, name: str) -> Extracted:
    """Word paragraphs and tables in order, cut at headings (styles "Heading 1".."Heading 9")."""
    from io import BytesIO
    from zipfile import BadZipFile

    import docx
    from docx.table import Table

    try:
        document = docx.Document(BytesIO(data))
    except (BadZipFile, KeyError, ValueError) as exc:
        raise Unextractable(f"unreadable Word file: {exc}") from exc
    sections: list[Section] = []
    heads: list[str] = []
    lines: list[str] = []
    budget = TextBudget()
    # A paragraph's style by its id, looked up once: python-docx's ``Paragraph.style`` scans
    # every style for the default on each unstyled paragraph (11 s per MiB of text).
    style_names = {s.style_id: str(s.name) for s in document.styles}
    found: list[tuple[str, list[list[str]]]] = []
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            cells = [_docx_row(row, block, budget) for row in block.rows]
            found.append(("", cells))
            lines += [" | ".join(row) for row in cells]
            continue
        text, style = block.text.strip(), style_names.get(block._p.style or "", "")
        level = (
            int(style.split()[-1]) if style.startswith("Heading ") and style[-1].isdigit() else 0
        )
        if level and text:
            if lines:
                sections.append(Section("\n".join(lines), heading=" > ".join(heads)))
                lines = []
            heads = [*heads[: level - 1], text]
        elif text:
            lines.append(budget.take(text))
    if lines:
        sections.append(Section("\n".join(lines), heading=" > ".join(heads)))
    title = (document.core_properties.title or "").strip() or (heads[0] if heads else name)
    return Extracted(title, "docx", sections, document_tables(name, found))


def _docx_row(row: Any, table: Any, budget: TextBudget) -> list[str]:
    """A Word table row's cells, each cell's text once, within ``MAX_COLUMNS`` and the budget.

    A cell spanning columns (``gridSpan``) is its text then empty cells, not its text again
    per column; one continuing a vertical merge is empty (its text is in the row it starts):
    python-docx repeats the text for both, so a declared span of 20,000 columns turned one
    cell into 20,000 copies.
    """
    from docx.table import _Cell

    cells: list[str] = []
    for tc in row._tr.tc_lst:
        text = "" if tc.vMerge == "continue" else budget.take(_Cell(tc, table).text.strip())
        cells += [text, *[""] * (min(tc.grid_span, MAX_COLUMNS) - 1)]
        if len(cells) >= MAX_COLUMNS:
            break
    return cells[:MAX_COLUMNS]


def _converted(kind: str) -> Callable[[bytes, str], Extracted]:
    """A reader through markitdown (slides, EPUB, notebooks): Markdown, then sections.

    Each slide becomes a "Slide N" heading above its own title; an EPUB's metadata block is
    dropped (its title is kept); table rows name their columns (``_rows_with_headers``).
    """

    def read(data: bytes, name: str) -> Extracted:
        from markitdown import StreamInfo
        from markitdown.converters import (
            EpubConverter,
            IpynbConverter,
            PptxConverter,
        )

        converter = {
            "pptx": PptxConverter,
            "epub": EpubConverter,
            "notebook": IpynbConverter,
        }[kind]()
        suffix = next(s for s, k in FILE_TYPES.items() if k == kind)
        if kind == "notebook":
            _decode(data)  # refuses binary and non-UTF-8 data with the reason
        try:
            result = converter.convert(BytesIO(data), StreamInfo(extension=suffix, charset="utf-8"))
        except Exception as exc:  # each library raises its own errors for a damaged file
            raise Unextractable(f"unreadable {kind} file: {exc}") from exc
        text = result.markdown
        if kind == "pptx":
            text = re.sub(r"^# ", "## ", text, flags=re.M)
            text = re.sub(r"^<!-- Slide number: (\d+) -->$", r"# Slide \1", text, flags=re.M)
        if kind == "epub":
            text = re.sub(r"\A(\*\*[^*\n]+:\*\* .*\n)+", "", text.lstrip())
        sections = markdown_sections(_rows_with_headers(text))
        top = "" if kind == "pptx" else markdown_title(text)  # a deck's H1s are slides
        title = (result.title or "").strip() or top or name
        return Extracted(title, kind, sections, document_tables(name, pipe_tables(text)))

    return read


def _csv(data: bytes, name: str) -> Extracted:
    """A CSV file: its table, and its rows as text in blocks under the header (``table_blocks``).

    A file whose text is past the cap is refused before any row is built (its rows' text is
    at least as long).
    """
    import csv

    text = _decode(data)  # refuses binary and non-UTF-8 data with the reason
    if len(text) > MAX_TEXT_CHARS:
        raise too_long()
    try:
        rows = csv_rows(text)
    except csv.Error as exc:
        raise Unextractable(f"unreadable csv file: {exc}") from exc
    table = table_from_rows(name, "", rows)
    blocks = table_blocks(([c.strip() for c in row] for row in rows), TextBudget())
    return Extracted(name, "csv", [Section(b) for b in blocks], (table,) if table else ())


def _rows_with_headers(markdown: str) -> str:
    """Markdown pipe tables rewritten as one line per row that names its cells' columns.

    The header row is dropped after use, and so is the separator row (``named_row``). The
    text is counted as it is built (``TextBudget``): a long header repeated in every row
    stops at the cap instead of after it.
    """
    budget = TextBudget()
    out: list[str] = []
    header: list[str] | None = None
    for line in markdown.splitlines():
        cells = pipe_cells(line)
        if cells is None:
            header = None
            out.append(budget.take(line))
        elif header is None:
            header = cells
        elif is_rule_row(cells):
            continue
        else:
            out.append(budget.take(named_row(header, cells)))
    return "\n".join(out)


def _xlsx(data: bytes, name: str) -> Extracted:
    """A workbook's sheets, each its rows in blocks under its first row (``table_blocks``).

    Rows are read as the sheet holds them, not padded out to the size it declares (a
    ``dimension`` of thousands of columns by thousands of rows with two real cells), and a
    sheet stops at ``MAX_CELLS`` cells read; the text is counted as it is built.
    """
    from zipfile import BadZipFile

    from openpyxl import load_workbook

    try:
        book = load_workbook(BytesIO(data), read_only=True, data_only=True)
    except (BadZipFile, KeyError, ValueError, OSError) as exc:
        raise Unextractable(f"unreadable spreadsheet: {exc}") from exc
    sections = []
    tables: list[Table] = []
    budget = TextBudget()
    for sheet in book.worksheets:
        values = list(_sheet_rows(sheet))
        table = table_from_rows(name, str(sheet.title), values)
        if table:
            tables.append(table)
        rows = ([_sheet_cell(v) for v in row] for row in values)
        sections += [Section(b, heading=str(sheet.title)) for b in table_blocks(rows, budget)]
    title = str(book.properties.title or "").strip() or name
    book.close()
    return Extracted(title, "xlsx", sections, tuple(tables))


def _sheet_cell(value: object) -> str:
    """A workbook cell as text: a date at midnight without its time, "" for an empty one."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    return str(value).strip()


def _sheet_rows(sheet: Any) -> Iterator[tuple[object, ...]]:
    """A read-only sheet's rows, their trailing empty cells cut, within ``MAX_CELLS``.

    The sheet's declared dimension is dropped first (openpyxl pads every row, missing ones
    included, to it); a row is then as wide as its last cell, and the cells counted are the
    ones produced, so a far cell costs its whole row.
    """
    sheet.reset_dimensions()
    cells = 0
    for row in sheet.iter_rows(values_only=True):
        cells += max(len(row), 1)
        if cells > MAX_CELLS:
            raise Damaged(f"the sheet {str(sheet.title)[:40]!r} has more than {MAX_CELLS:,} cells")
        end = len(row)
        while end and row[end - 1] is None:
            end -= 1
        yield row[:end]


def _rst(data: bytes, name: str) -> Extracted:
    """A reStructuredText file, rendered to HTML by docutils and read as a page."""
    from docutils.core import publish_string
    from docutils.utils import SystemMessage

    try:
        html = publish_string(
            _decode(data),
            writer="html5",
            settings_overrides={
                "report_level": 5,
                "halt_level": 5,
                "file_insertion_enabled": False,
                "raw_enabled": False,
                "input_encoding": "unicode",
            },
        )
    except SystemMessage as exc:
        raise Unextractable(f"unreadable reStructuredText: {exc}") from exc
    page = _html(html, name)
    return Extracted(page.title, "rst", page.sections)


READERS: dict[str, Callable[[bytes, str], Extracted]] = {
    "text": _text,
    "markdown": _markdown,
    "html": _html,
    "docx": _docx,
    "pptx": _converted("pptx"),
    "csv": _csv,
    "epub": _converted("epub"),
    "notebook": _converted("notebook"),
    "xlsx": _xlsx,
    "rst": _rst,
}
"""The reader of each file type: ``(bytes, name) -> Extracted``."""

PAGE_IMAGE_READERS: dict[str, Callable[[bytes, str, OcrEngine], Extracted]] = {
    "pdf": _pdf,
    "image": _image,
}
"""The readers of types whose pages may be images: ``(bytes, name, ocr) -> Extracted``."""
