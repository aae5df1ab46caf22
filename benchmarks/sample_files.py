"""Real PDF, HTML and Word files with known content, made on the spot for tests and benchmarks.

Every file's body is made of numbered sentences ("Fact 3 of page 2 ...") so an extractor's
recall can be counted; HTML pages also carry navigation, scripts and styles whose words
(``NOISE_WORDS``) must not come out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

NOISE_WORDS = ("menuitem", "trackingpixel", "stylerule", "footerlinks", "sidebarpromo")
"""Words that appear only in an HTML page's furniture."""


def sentences(section: int, count: int = 6) -> list[str]:
    """Known sentences of one page or section."""
    return [
        f"Fact {i} of part {section} says the river Velna{section}x{i} floods every spring."
        for i in range(1, count + 1)
    ]


def make_pdf(path: Path, pages: int = 3, title: str = "Velna river report") -> list[list[str]]:
    """A PDF with a text layer: ``pages`` pages of known sentences; returns them per page."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_font("Helvetica", size=11)
    body = [sentences(p) for p in range(1, pages + 1)]
    for page in body:
        pdf.add_page()
        pdf.multi_cell(0, 6, " ".join(page))
    pdf.output(str(path))
    return body


def make_scanned_pdf(path: Path) -> None:
    """A PDF whose page is only a drawing, like a scan without OCR."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.rect(20, 20, 120, 80, style="F")
    pdf.output(str(path))


def make_encrypted_pdf(path: Path, password: str = "secret") -> None:
    """A PDF that opens only with ``password``."""
    from pypdf import PdfReader, PdfWriter

    plain = path.with_suffix(".plain.pdf")
    make_pdf(plain, pages=1)
    writer = PdfWriter(clone_from=PdfReader(str(plain)))
    writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    with path.open("wb") as fh:
        writer.write(fh)
    plain.unlink()


def make_html(path: Path, sections: int = 3) -> list[list[str]]:
    """A web page with one ``<h2>`` per section; returns the sentences per section.

    Navigation, a header, scripts, styles, a sidebar and a footer surround the article.
    """
    body = [sentences(s) for s in range(1, sections + 1)]
    article = "\n".join(
        f"<h2>Part {s}</h2>\n" + "\n".join(f"<p>{t}</p>" for t in part)
        for s, part in enumerate(body, start=1)
    )
    html = f"""<!doctype html>
<html><head><title>Velna river guide</title>
<style>.menuitem {{ color: red }} /* stylerule */</style>
<script>var trackingpixel = "trackingpixel";</script></head>
<body>
<header><a href="/">Home</a> menuitem</header>
<nav><ul><li><a href="/a">menuitem one</a></li><li><a href="/b">menuitem two</a></li></ul></nav>
<main><article><h1>Velna river guide</h1>
{article}
</article></main>
<aside>sidebarpromo: subscribe now</aside>
<footer>footerlinks | contact | imprint</footer>
<script>console.log("trackingpixel")</script>
</body></html>
"""
    path.write_text(html, encoding="utf-8")
    return body


GAUGES = [("gauge", "level"), ("Velna bridge", "4.2 m")]
"""The small table the Word and slide files carry: a header row and one reading."""


def fill_gauges(table: Any) -> None:
    """Write ``GAUGES`` into a 2x2 python-docx or python-pptx table (both index cells alike)."""
    for r, row in enumerate(GAUGES):
        for c, text in enumerate(row):
            table.cell(r, c).text = text


def make_docx(path: Path, sections: int = 3) -> list[list[str]]:
    """A Word file: a title, one "Heading 1" per section with paragraphs, and a table."""
    import docx

    document = docx.Document()
    document.core_properties.title = "Velna river handbook"
    body = [sentences(s) for s in range(1, sections + 1)]
    for s, part in enumerate(body, start=1):
        document.add_heading(f"Part {s}", level=1)
        document.add_heading(f"Details of part {s}", level=2)
        for sentence in part:
            document.add_paragraph(sentence)
    fill_gauges(document.add_table(rows=2, cols=2))
    document.save(str(path))
    return body


def make_pptx(path: Path, sections: int = 3) -> list[list[str]]:
    """Slides titled "Part s", each with its sentences as bullets; the last has a table."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    body = [sentences(s) for s in range(1, sections + 1)]
    for s, part in enumerate(body, start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"Part {s}"
        frame = slide.placeholders[1].text_frame
        frame.text = part[0]
        for sentence in part[1:]:
            frame.add_paragraph().text = sentence
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Gauges"
    fill_gauges(slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1)).table)
    deck.save(str(path))
    return body


def make_xlsx(path: Path, sections: int = 3) -> list[list[str]]:
    """A workbook with one sheet per part ("Part s"): columns gauge, level, note (a sentence)."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    body = [sentences(s) for s in range(1, sections + 1)]
    for s, part in enumerate(body, start=1):
        sheet = book.create_sheet(f"Part {s}")
        sheet.append(["gauge", "level", "note"])
        for i, sentence in enumerate(part, start=1):
            sheet.append([f"Velna gauge {s}.{i}", 1.5 + i / 10, sentence])
    book.save(str(path))
    return body


def make_csv(path: Path, sections: int = 3) -> list[list[str]]:
    """A table with columns part, gauge, note; each note a known sentence."""
    import csv

    body = [sentences(s) for s in range(1, sections + 1)]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["part", "gauge", "note"])
        for s, part in enumerate(body, start=1):
            writer.writerows([f"Part {s}", f"Velna gauge {s}.{i}", t] for i, t in enumerate(part))
    return body


def make_rst(path: Path, sections: int = 3) -> list[list[str]]:
    """reStructuredText: a title, one section "Part s" each, a definition list and code."""
    body = [sentences(s) for s in range(1, sections + 1)]
    lines = ["Velna river notes", "=================", ""]
    for s, part in enumerate(body, start=1):
        lines += [f"Part {s}", "-" * len(f"Part {s}"), "", " ".join(part[:3]), ""]
        lines += [f"gauge_{s}(level=4.2)", f"    {part[3]}", ""]  # a definition list item
        lines += [f"* {t}" for t in part[4:]] + [""]
        lines += ["::", "", f"    velna.read(part={s})", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return body


def make_ipynb(path: Path, sections: int = 3) -> list[list[str]]:
    """A notebook: a Markdown cell "## Part s" with sentences, then a code cell and its output."""
    import json

    body = [sentences(s) for s in range(1, sections + 1)]
    cells: list[dict[str, Any]] = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Velna river notebook"]}
    ]
    for s, part in enumerate(body, start=1):
        text = f"## Part {s}\n\n" + "\n\n".join(part[:5])
        cells.append({"cell_type": "markdown", "metadata": {}, "source": text.splitlines(True)})
        cells.append(
            {
                "cell_type": "code",
                "execution_count": s,
                "metadata": {},
                "source": [f"print({part[5]!r})"],
                "outputs": [{"output_type": "stream", "name": "stdout", "text": [part[5] + "\n"]}],
            }
        )
    notebook = {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return body


def make_epub(path: Path, sections: int = 3) -> list[list[str]]:
    """An EPUB 3 book (zip of XHTML chapters, made with the standard library): "Part s" each."""
    import zipfile

    body = [sentences(s) for s in range(1, sections + 1)]
    chapters = {
        f"part{s}.xhtml": (
            '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>Part {s}</title></head><body><h1>Part {s}</h1>"
            + "".join(f"<p>{t}</p>" for t in part)
            + "</body></html>"
        )
        for s, part in enumerate(body, start=1)
    }
    items = "".join(
        f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, name in enumerate(chapters)
    )
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    nav_links = "".join(f'<li><a href="{n}">{n}</a></li>' for n in chapters)
    opf = (
        '<?xml version="1.0" encoding="utf-8"?>\n<package xmlns="http://www.idpf.org/2007/opf" '
        'version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:identifier id="id">velna-1</dc:identifier><dc:title>Velna river book</dc:title>'
        "<dc:language>en</dc:language></metadata><manifest>"
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        f"{items}</manifest><spine>{spine}</spine></package>"
    )
    nav = (
        '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
        'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title></head><body>'
        f'<nav epub:type="toc"><ol>{nav_links}</ol></nav></body></html>'
    )
    container = (
        '<?xml version="1.0"?>\n<container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", container)
        book.writestr("OEBPS/content.opf", opf)
        book.writestr("OEBPS/nav.xhtml", nav)
        for name, xhtml in chapters.items():
            book.writestr(f"OEBPS/{name}", xhtml)
    return body
