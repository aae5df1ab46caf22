"""Text out of the files people keep: plain text, Markdown, PDF, HTML and Word.

``extract(path)`` returns the document's title, its type and its text as sections that keep
the file's own structure: a PDF's pages (``page``), or the heading path of Markdown, HTML and
Word documents (``heading``, e.g. "Install > Linux"). A file that has no usable text raises
``Unextractable`` with the reason (encrypted, no text layer, binary, not UTF-8, empty…).

Libraries (chosen by ``benchmarks/extraction.py``, results in docs/benchmarks/extraction.md):
pypdf for PDF text layers, BeautifulSoup (lxml parser) for HTML, python-docx for Word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 20 * 1024 * 1024
"""Larger files are refused (a knowledge base of manuals, not of data dumps)."""

FILE_TYPES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".pdf": "pdf",
    ".html": "html",
    ".htm": "html",
    ".docx": "docx",
}
"""Supported suffixes and the file type each is recorded as."""

HTML_NOISE = ("script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form")
"""HTML elements that are page furniture, not content."""

_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


class Unextractable(Exception):
    """A file with no text crag can use; the message says why."""


@dataclass(frozen=True)
class Section:
    """A run of text and where it sits in its file."""

    text: str
    page: int | None = None
    """1-based page of a PDF."""
    heading: str = ""
    """The headings above the text, outermost first, joined by " > "."""


@dataclass(frozen=True)
class Extracted:
    """A file's title, its type, and its text in sections."""

    title: str
    file_type: str
    sections: list[Section]


def file_type(path: Path) -> str | None:
    """The recorded type of ``path`` (``None``: not a supported type)."""
    return FILE_TYPES.get(path.suffix.lower())


def extract(path: Path) -> Extracted:
    """The text of ``path`` in sections; ``Unextractable`` if there is none to use."""
    kind = file_type(path)
    if kind is None:
        raise Unextractable(f"unsupported file type {path.suffix or '(none)'!r}")
    data = _read(path)
    extracted = {
        "text": _text,
        "markdown": _markdown,
        "pdf": _pdf,
        "html": _html,
        "docx": _docx,
    }[kind](path, data)
    if not any(s.text.strip() for s in extracted.sections):
        raise Unextractable("no text in the file")
    return extracted


def _read(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise Unextractable(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise Unextractable(f"cannot read: {exc.strerror or exc}") from exc
    if not data.strip():
        raise Unextractable("empty file")
    return data


def _decode(data: bytes) -> str:
    if b"\x00" in data:
        raise Unextractable("binary file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unextractable(f"not UTF-8 text (byte {exc.start})") from exc


def _text(path: Path, data: bytes) -> Extracted:
    return Extracted(path.stem, "text", [Section(_decode(data))])


def _markdown(path: Path, data: bytes) -> Extracted:
    """Markdown as one section: its headings are found per chunk (``heading_at``)."""
    text = _decode(data)
    top = next((m.group(2) for m in _MD_HEADING.finditer(text) if len(m.group(1)) == 1), "")
    return Extracted(top or path.stem, "markdown", [Section(text)])


def heading_at(text: str, offset: int) -> str:
    """The Markdown heading path in force at ``offset`` of ``text`` ("" before any heading)."""
    path: list[str] = []
    for m in _MD_HEADING.finditer(text, 0, offset):
        level = len(m.group(1))
        path = [*path[: level - 1], m.group(2)]
    return " > ".join(path)


def _pdf(path: Path, data: bytes) -> Extracted:
    from io import BytesIO

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unextractable("encrypted PDF (it needs a password)")
        pages = [page.extract_text() or "" for page in reader.pages]
        title = str(reader.metadata.title or "").strip() if reader.metadata else ""
    except (PdfReadError, ValueError, KeyError) as exc:
        raise Unextractable(f"unreadable PDF: {exc}") from exc
    if not any(p.strip() for p in pages):
        raise Unextractable("PDF without a text layer (scanned? run OCR first)")
    sections = [Section(text, page=i) for i, text in enumerate(pages, start=1) if text.strip()]
    return Extracted(title or path.stem, "pdf", sections)


def _html(path: Path, data: bytes) -> Extracted:
    """Main text of a web page: furniture dropped, text cut at headings."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(data, "lxml")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(HTML_NOISE):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    sections: list[Section] = []
    heads: list[str] = []
    lines: list[str] = []
    for el in root.find_all(["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "td", "th"]):
        text = el.get_text(" ", strip=True)
        if not text or el.find_parent(["li", "td", "th", "pre"]) is not None:
            continue
        if el.name[0] == "h" and el.name[1:].isdigit():
            if lines:
                sections.append(Section("\n".join(lines), heading=" > ".join(heads)))
                lines = []
            heads = [*heads[: int(el.name[1:]) - 1], text]
        else:
            lines.append(text)
    if lines:
        sections.append(Section("\n".join(lines), heading=" > ".join(heads)))
    return Extracted(title or (heads[0] if heads else path.stem), "html", sections)


def _docx(path: Path, data: bytes) -> Extracted:
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
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            lines += [" | ".join(c.text.strip() for c in row.cells) for row in block.rows]
            continue
        text, style = block.text.strip(), (block.style.name if block.style else "")
        level = (
            int(style.split()[-1]) if style.startswith("Heading ") and style[-1].isdigit() else 0
        )
        if level and text:
            if lines:
                sections.append(Section("\n".join(lines), heading=" > ".join(heads)))
                lines = []
            heads = [*heads[: level - 1], text]
        elif text:
            lines.append(text)
    if lines:
        sections.append(Section("\n".join(lines), heading=" > ".join(heads)))
    title = (document.core_properties.title or "").strip() or (heads[0] if heads else path.stem)
    return Extracted(title, "docx", sections)
