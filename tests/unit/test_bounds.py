"""Bounded work on hostile files: archives checked before unpacking, text capped, linear
patterns, every parser failure a reason, Chroma written under its batch limit.

The hostile inputs are small but proportional: the limits are lowered for the test and the
input is built just past them, so a check that works at the real limits works here too.
"""

from __future__ import annotations

import gc
import io
import time
import zipfile

import docx
import pytest

from crag_core.clients.chroma import NewDocument
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.formats import extract
from crag_core.formats.extract import Damaged, extract_data, markdown_sections
from tests.fakes import HashEmbeddings


def word_file(body_bytes: int = 0, extra_members: int = 0, broken_xml: bool = False) -> bytes:
    """A .docx whose body holds ``body_bytes`` of paragraphs (it compresses ~100x)."""
    made = io.BytesIO()
    docx.Document().save(made)
    source = zipfile.ZipFile(io.BytesIO(made.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/document.xml":
                para = b"<w:p><w:r><w:t>The gauge reads 4.2 m at the bridge.</w:t></w:r></w:p>"
                data = data.replace(b"<w:body>", b"<w:body>" + para * (body_bytes // len(para)))
                if broken_xml:
                    data = data.replace(b"</w:body>", b"<w:p></w:body>")
            archive.writestr(info, data)
        for n in range(extra_members):
            archive.writestr(f"extra/item{n}.xml", b"<a/>")
    return out.getvalue()


def test_an_archive_that_unpacks_past_the_bound_is_refused_before_unpacking(monkeypatch):
    monkeypatch.setattr(extract, "MAX_UNPACKED_BYTES", 2 << 20)
    bomb = word_file(body_bytes=4 << 20)
    assert len(bomb) < 100 << 10  # 4 MiB of text in a small file
    started = time.perf_counter()
    with pytest.raises(Damaged, match=r"unpacks to 4\.\d MiB, more than 2 MiB"):
        extract_data(bomb, "docx", "bomb")
    assert time.perf_counter() - started < 1.0
    assert extract_data(word_file(body_bytes=256 << 10), "docx", "fine").sections


def test_an_archive_of_too_many_files_is_refused(monkeypatch):
    monkeypatch.setattr(extract, "MAX_MEMBERS", 50)
    with pytest.raises(Damaged, match=r"holds \d+ files, more than 50"):
        extract_data(word_file(extra_members=60), "docx", "many")


def test_text_past_the_cap_is_refused_with_its_length(monkeypatch):
    monkeypatch.setattr(extract, "MAX_TEXT_CHARS", 10_000)
    long_notes = ("# Notes\n\n" + "A line of notes about gauges.\n" * 700).encode()
    with pytest.raises(Damaged, match="more than 10,000"):
        extract_data(long_notes, "markdown", "notes")


@pytest.mark.parametrize(
    "data, kind",
    [
        (word_file(broken_xml=True), "docx"),
        (b"PK\x03\x04" + b"\x00" * 40, "pptx"),
        (b"<div>" * 20_000 + b"deep" + b"</div>" * 20_000, "html"),
        (b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\n", "pdf"),
        (b'{"cells": [{"cell_type": "markdown", "source": 5}]}', "notebook"),
    ],
)
def test_a_parser_failure_is_a_reason_never_a_crash(data, kind):
    try:
        extracted = extract_data(data, kind, "hostile")
    except extract.Unextractable as refused:
        assert str(refused) and "Traceback" not in str(refused)
    else:
        assert extracted.file_type == kind  # read as far as it could be: also fine


def markdown_seconds(text: str) -> float:
    """The best of three readings (the least disturbed by anything else on the machine), with
    the garbage collector held off (its passes over many new objects are not the reader's)."""
    times = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            started = time.perf_counter()
            markdown_sections(text)
            times.append(time.perf_counter() - started)
    finally:
        gc.enable()
    return min(times)


@pytest.mark.parametrize(
    "unit",
    [
        "```x\n",  # fences that never close
        "# heading" + " " * 40 + "x\n",  # long runs of spaces after a heading
        "# h\n```\ncode\n```\n",  # many headings and many fences
    ],
)
def test_markdown_is_read_in_linear_time(unit):
    small, large = unit * 5_000, unit * 20_000  # 4x the input
    readings = [(markdown_seconds(small), markdown_seconds(large)) for _ in range(2)]
    ratio = min(b for _, b in readings) / max(min(a for a, _ in readings), 1e-4)
    assert markdown_seconds(unit * 20_000) < 2.0  # 160 KB took 154 s with the old pattern
    assert ratio < 10, ratio  # linear: about 4; quadratic: 16


def test_a_document_past_chromas_batch_limit_is_written(tmp_path):
    kb = KnowledgeBase(tmp_path / "chroma", "big", HashEmbeddings())
    chunks = [f"chunk {i} about the river" for i in range(6_000)]  # Chroma takes 5,461 a call
    kb.replace_documents([NewDocument("big-1", "/big.md", "h1", chunks)])
    assert kb.count() == 6_000
    kb.replace_documents([NewDocument("big-1", "/big.md", "h2", chunks[:10])])
    assert kb.count() == 10  # the stale 5,990 deleted in batches too
