"""PDF, HTML and Word files made by the tests, ingested for real: text, structure, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document
from typer.testing import CliRunner

from benchmarks.fixtures.sample_files import (
    NOISE_WORDS,
    make_csv,
    make_docx,
    make_encrypted_pdf,
    make_epub,
    make_html,
    make_ipynb,
    make_pdf,
    make_pptx,
    make_rst,
    make_scanned_pdf,
    make_xlsx,
)
from crag.cli import app
from crag.ingest import chunk, ingest
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.formats.extract import Unextractable, extract
from crag_core.text.documents import body
from nodes.shared.answers import sources_of
from tests.fakes import HashEmbeddings


@pytest.fixture
def kb(tmp_path):
    return KnowledgeBase(tmp_path / "chroma", "formats", HashEmbeddings())


def stored(kb):
    got = kb.collection.get(include=["documents", "metadatas"])
    return list(zip(got["documents"], got["metadatas"], strict=True))


def test_a_multi_page_pdf_keeps_its_pages_and_title(kb, tmp_path):
    pages = make_pdf(tmp_path / "report.pdf", pages=3)
    report = ingest(kb, [str(tmp_path / "report.pdf")])
    assert [Path(p).name for p in report.added] == ["report.pdf"] and not report.failed
    chunks = stored(kb)
    assert {m["page"] for _, m in chunks} == {1, 2, 3}
    assert {m["type"] for _, m in chunks} == {"pdf"}
    assert {m["title"] for _, m in chunks} == {"Velna river report"}
    fact = pages[1][3]  # a sentence of page 2
    text, meta = next((t, m) for t, m in chunks if fact in " ".join(t.split()))
    assert meta["page"] == 2
    hit = kb.search(fact, 1, "keyword")[0]
    assert sources_of([hit])[0]["location"] == "page 2"  # what the user is shown


def test_an_html_page_gives_its_article_not_its_furniture(kb, tmp_path):
    parts = make_html(tmp_path / "guide.html")
    ingest(kb, [str(tmp_path / "guide.html")])
    chunks = stored(kb)
    everything = " ".join(t for t, _ in chunks).lower()
    assert not [w for w in NOISE_WORDS if w in everything]  # nav, scripts, styles, footer...
    assert all(s in everything for s in (p.lower() for part in parts for p in part))
    headings = {m["heading"] for _, m in chunks}
    assert "Velna river guide > Part 2" in headings
    assert {m["title"] for _, m in chunks} == {"Velna river guide"}


def test_a_word_file_keeps_its_heading_path_and_tables(kb, tmp_path):
    make_docx(tmp_path / "handbook.docx")
    ingest(kb, [str(tmp_path / "handbook.docx")])
    chunks = stored(kb)
    assert "Part 3 > Details of part 3" in {m["heading"] for _, m in chunks}
    assert any("Velna bridge | 4.2 m" in t for t, _ in chunks)
    assert {m["title"] for _, m in chunks} == {"Velna river handbook"}


def test_markdown_chunks_carry_the_heading_they_sit_under(kb, tmp_path):
    body = "\n\n".join(f"Paragraph {i} about installing on Linux. " * 8 for i in range(6))
    (tmp_path / "guide.md").write_text(f"# Guide\n\nIntro.\n\n## Install\n\n### Linux\n\n{body}\n")
    ingest(kb, [str(tmp_path / "guide.md")])
    chunks = stored(kb)
    assert len(chunks) > 1
    assert {m["heading"] for t, m in chunks if "Paragraph 5" in t} == {"Guide > Install > Linux"}


def test_pdfs_without_usable_text_are_refused_with_the_reason(tmp_path):
    make_encrypted_pdf(tmp_path / "locked.pdf")
    make_scanned_pdf(tmp_path / "scan.pdf")
    with pytest.raises(Unextractable, match="encrypted"):
        extract(tmp_path / "locked.pdf")
    with pytest.raises(Unextractable, match="without a text layer"):
        extract(tmp_path / "scan.pdf")


def test_a_folder_ingest_reports_every_skipped_file_and_counts_it(hash_kb, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    make_pdf(folder / "report.pdf", pages=2)
    make_html(folder / "page.html")
    make_encrypted_pdf(folder / "locked.pdf")
    make_scanned_pdf(folder / "scan.pdf")
    (folder / "notes.md").write_text("# Notes\n\nSome notes.")
    (folder / "photo.heic").write_bytes(b"\x00\x00\x00 ftypheic")
    result = CliRunner().invoke(app, ["ingest", str(folder), "--collection", "folder"])
    assert result.exit_code == 0, result.output  # skipped inside a folder is not a failure
    assert "3 added" in result.output and "3 skipped" in result.output
    for name, reason in [
        ("locked.pdf", "encrypted"),
        ("scan.pdf", "without a text layer"),
        ("photo.heic", "unsupported file type"),
    ]:
        line = next(line for line in result.output.splitlines() if name in line)
        assert "skipped" in line and reason in line


def test_the_first_markdown_chunk_names_its_heading(kb, tmp_path):
    text = "# Guide\n\n## Install\n\n### Linux\n\nRun the installer.\n"
    text += "\n```sh\n# not a heading\n```\n"
    (tmp_path / "short.md").write_text(text)
    ingest(kb, [str(tmp_path / "short.md")])
    chunks = stored(kb)
    assert {m.get("heading") for t, m in chunks if "Run the installer" in t} == {
        "Guide > Install > Linux"
    }
    assert {m["title"] for _, m in chunks} == {"Guide"}  # its H1, a section of its own
    assert "Guide > Install > Linux > not a heading" not in {m.get("heading") for _, m in chunks}


SPHINX_PAGE = """<html><head><title>functools</title></head><body><div role="main">
<h1>functools<a class="headerlink" href="#f">¶</a></h1>
<dl class="py function"><dt class="sig sig-object py" id="functools.lru_cache">
<span class="sig-prename descclassname"><span class="pre">functools.</span></span><span
class="sig-name descname"><span class="pre">lru_cache</span></span><span class="sig-paren">(</span
><em class="sig-param"><span class="n"><span class="pre">maxsize</span></span><span class="o"><span
class="pre">=</span></span><span class="default_value"><span class="pre">128</span></span></em>,
<em class="sig-param"><span class="n"><span class="pre">typed</span></span><span class="o"><span
class="pre">=</span></span><span class="default_value"><span class="pre">False</span></span></em
><span class="sig-paren">)</span><a class="headerlink" href="#functools.lru_cache">¶</a></dt>
<dd><p>Decorator to wrap a function with a memoizing callable.</p>
<ul><li>Item A<ul><li>sub item</li></ul></li></ul></dd></dl>
<dl><dt>Term</dt><dd>Plain definition.</dd></dl>
<table><tr><th>gauge</th><th>level</th></tr><tr><td>Velna bridge</td><td>4.2 m</td></tr></table>
<p>The chart <img src="c.png" alt="water level over 2024"> shows it.</p>
</div></body></html>"""


def test_html_keeps_signatures_definitions_table_headers_and_alt_text(tmp_path):
    (tmp_path / "functools.html").write_text(SPHINX_PAGE)
    lines = extract(tmp_path / "functools.html").sections[0].text.splitlines()
    assert "functools.lru_cache(maxsize=128, typed=False)" in lines  # no "¶", no split pieces
    assert "Decorator to wrap a function with a memoizing callable." in lines
    assert ["Item A", "sub item"] == [x for x in lines if "item" in x.lower()]
    assert lines[lines.index("Term") + 1] == "Plain definition."
    assert "gauge: Velna bridge | level: 4.2 m" in lines
    assert "The chart [image: water level over 2024] shows it." in lines
    assert not [x for x in lines if "¶" in x]


LONG_TAIL = [
    # (maker, file name, the heading path of part 2's sentences, title)
    (make_pptx, "deck.pptx", "Slide 2 > Part 2", "deck"),
    (make_xlsx, "levels.xlsx", "Part 2", "levels"),
    (make_csv, "levels.csv", None, "levels"),
    (make_epub, "book.epub", "Part 2", "Velna river book"),
    (make_ipynb, "notes.ipynb", "Velna river notebook > Part 2", "Velna river notebook"),
    (make_rst, "notes.rst", "Velna river notes > Part 2", "Velna river notes"),
]


@pytest.mark.parametrize(("make", "name", "heading", "title"), LONG_TAIL)
def test_long_tail_formats_give_every_sentence_under_its_heading(
    kb, tmp_path, make, name, heading, title
):
    parts = make(tmp_path / name)
    report = ingest(kb, [str(tmp_path / name)])
    assert [Path(p).name for p in report.added] == [name] and not report.failed
    chunks = stored(kb)
    text = " ".join(" ".join(t.split()) for t, _ in chunks)
    assert [s for part in parts for s in part if s not in text] == []
    assert {m["title"] for _, m in chunks} == {title}
    fact = parts[1][2]
    where = {m.get("heading") for t, m in chunks if fact in " ".join(t.split())}
    assert where == {heading}


def bodies(path: Path) -> list[str]:
    """The file's chunks as ``chunk`` cuts them, without their context lines."""
    return [body(Document(page_content=t, metadata=where)) for t, where in chunk(extract(path))]


def test_every_chunk_of_a_spreadsheet_names_its_columns_once(tmp_path):
    make_csv(tmp_path / "levels.csv")
    make_xlsx(tmp_path / "levels.xlsx")
    rows = ["part,gauge,note"] + [
        f"Part {i % 7},Velna gauge {i},Fact {i} of the log" for i in range(400)
    ]
    (tmp_path / "log.csv").write_text("\n".join(rows) + "\n")
    for name, header in [
        ("levels.csv", "part | gauge | note"),
        ("levels.xlsx", "gauge | level | note"),
        ("log.csv", "part | gauge | note"),
    ]:
        chunks = bodies(tmp_path / name)
        assert chunks and all(c.splitlines()[0] == header and c.count(header) == 1 for c in chunks)
    lines = {line for text in bodies(tmp_path / "levels.csv") for line in text.splitlines()}
    assert any(x.startswith("Part 2 | Velna gauge 2.1 | Fact 2") for x in lines)
    lines = {line for text in bodies(tmp_path / "levels.xlsx") for line in text.splitlines()}
    assert any(x.startswith("Velna gauge 3.4 | 1.9 | Fact 4") for x in lines)
    log = bodies(tmp_path / "log.csv")
    assert len(log) > 20 and sum(c.count("Velna gauge") for c in log) == 400  # each row once


def test_a_table_inside_a_document_names_each_cells_column(tmp_path):
    make_pptx(tmp_path / "deck.pptx")
    lines = {
        line
        for section in extract(tmp_path / "deck.pptx").sections
        for line in section.text.splitlines()
    }
    assert "gauge: Velna bridge | level: 4.2 m" in lines  # a table on a slide


@pytest.mark.parametrize("name", ["broken.pptx", "broken.xlsx", "broken.epub"])
def test_a_damaged_office_file_is_refused_with_the_reason(tmp_path, name):
    (tmp_path / name).write_bytes(b"PK\x03\x04 not really a zip archive")
    with pytest.raises(Unextractable, match="unreadable"):
        extract(tmp_path / name)


def test_a_binary_csv_is_refused(tmp_path):
    (tmp_path / "data.csv").write_bytes(b"a,b\n\x00\x01\x02")
    with pytest.raises(Unextractable, match="binary"):
        extract(tmp_path / "data.csv")
