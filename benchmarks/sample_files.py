"""Real PDF, HTML and Word files with known content, made on the spot for tests and benchmarks.

Every file's body is made of numbered sentences ("Fact 3 of page 2 ...") so an extractor's
recall can be counted; HTML pages also carry navigation, scripts and styles whose words
(``NOISE_WORDS``) must not come out.
"""

from __future__ import annotations

from pathlib import Path

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
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "gauge", "level"
    table.cell(1, 0).text, table.cell(1, 1).text = "Velna bridge", "4.2 m"
    document.save(str(path))
    return body
