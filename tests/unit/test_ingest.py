"""Ingestion into a real Chroma store on disk (with a fast deterministic embedding)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crag.ingest import document_id, ingest, split_text
from crag_core.clients.knowledge_base import KnowledgeBase
from crag_core.errors import KnowledgeBaseError
from crag_core.text.documents import body, chunk_id
from crag_core.text.whole_document import joined
from tests.fakes import HashEmbeddings


@pytest.fixture
def kb(tmp_path):
    return KnowledgeBase(tmp_path / "chroma", "test-kb", HashEmbeddings())


def all_ids(kb):
    return kb.collection.get(include=[])["ids"]


def test_chunk_ids_are_positional_and_stable(tmp_path):
    f = tmp_path / "Notes File.md"
    assert document_id(f) == document_id(tmp_path / "." / "Notes File.md")
    assert document_id(f).startswith("notes-file-")
    assert chunk_id("notes-file-abcd1234", 3) == "notes-file-abcd1234__c0003"


def test_split_text_overlaps_and_bounds_chunks():
    text = " ".join(f"word{i}" for i in range(2000))
    chunks = split_text(text)
    assert len(chunks) > 5 and all(len(c) <= 800 for c in chunks)
    assert chunks[0].split()[-1] in chunks[1]  # overlap


def test_ingest_is_idempotent_and_replaces_changed_files(kb, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    long_doc = folder / "long.md"
    long_doc.write_text("Alpha beta gamma. " * 300)
    (folder / "short.txt").write_text("The Denver Broncos won Super Bowl 50.")
    first = ingest(kb, [str(folder)])
    assert len(first.added) == 2 and not first.failed
    ids = all_ids(kb)
    assert len(ids) == len(set(ids)) == first.chunks

    again = ingest(kb, [str(folder)])
    assert len(again.unchanged) == 2 and again.chunks == 0
    assert sorted(all_ids(kb)) == sorted(ids)

    long_doc.write_text("Now a short text about delta.")  # fewer chunks than before
    changed = ingest(kb, [str(long_doc)])
    assert len(changed.replaced) == 1
    long_ids = [i for i in all_ids(kb) if i.startswith(document_id(long_doc))]
    assert long_ids == [chunk_id(document_id(long_doc), 0)]  # stale chunks removed
    hit = kb.search("Denver Broncos Super Bowl", 1)[0]
    assert hit.metadata["source"].endswith("short.txt") and hit.metadata["id"].endswith("__c0000")


def test_bad_items_are_reported_and_the_rest_is_ingested(kb, tmp_path):
    good = tmp_path / "good.md"
    good.write_text("Good text.")
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "binary.txt").write_bytes(b"abc\x00def")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "data.xlsb").write_bytes(b"PK")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF")
    loop = tmp_path / "loop.md"
    loop.symlink_to(loop)
    paths = [
        str(p)
        for p in (
            good,
            tmp_path / "empty.txt",
            tmp_path / "binary.txt",
            tmp_path / "latin1.txt",
            tmp_path / "data.xlsb",
            tmp_path / "broken.pdf",
            loop,
            tmp_path / "missing.md",
        )
    ]
    report = ingest(kb, paths)
    assert [Path(p).name for p in report.added] == ["good.md"]
    reasons = dict(report.failed)
    assert reasons[str(tmp_path / "empty.txt")] == "empty file"
    assert reasons[str(tmp_path / "binary.txt")] == "binary file"
    assert reasons[str(tmp_path / "latin1.txt")].startswith("not UTF-8")
    assert reasons[str(tmp_path / "data.xlsb")].startswith("unsupported file type")
    assert reasons[str(tmp_path / "broken.pdf")].startswith("unreadable PDF")
    assert reasons[str(loop)] == "broken or looping symlink"
    assert reasons[str(tmp_path / "missing.md")] == "no such file or directory"
    assert kb.count() == 1


def test_folder_walk_ignores_other_types_and_symlinked_dirs(kb, tmp_path):
    (tmp_path / "a.md").write_text("A text.")
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00 ftyp")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("B text.")
    (tmp_path / "sub" / "up").symlink_to(tmp_path, target_is_directory=True)
    report = ingest(kb, [str(tmp_path)])
    assert sorted(Path(p).name for p in report.added) == ["a.md", "b.txt"] and not report.failed
    assert dict(report.skipped)[str(tmp_path / "clip.mp4")].startswith("unsupported file type")


def test_invalid_collection_name_is_refused(tmp_path):
    with pytest.raises(KnowledgeBaseError, match="invalid"):
        KnowledgeBase(tmp_path, "x", HashEmbeddings())


def test_progress_follows_the_embedding_of_a_batch(kb, tmp_path):
    for n in range(3):  # 3 files of about 120 chunks: one batch, embedded 256 chunks at a time
        body = "\n\n".join(f"Paragraph {i} of file {n}. " * 20 for i in range(120))
        (tmp_path / f"f{n}.md").write_text(f"# File {n}\n\n{body}")
    seen: list[tuple[float, int, str]] = []
    report = ingest(kb, [str(tmp_path)], on_progress=lambda d, t, s: seen.append((d, t, s)))
    embedding = [(d, s) for d, _, s in seen if s.startswith("embedding")]
    assert len(embedding) == 1 + -(-report.chunks // 256) > 2  # one line before, one per slice
    done = [d for d, _ in embedding]
    assert done == sorted(done) and done[0] < done[1] < done[-1] == 3  # it moves while embedding
    assert embedding[-1][1] == f"embedding and writing: {report.chunks} of {report.chunks} chunks"
    assert seen[-1] == (3, 3, "done")


def test_a_document_s_kind_is_stored_when_it_is_read(kb, tmp_path):
    (tmp_path / "notes.txt").write_text(
        "Release notes\n\n5.4.1 (2023-01-11)\n  * Fixed a crash.\n\n5.4.0 (2022-12-13)\n  * New.\n"
    )
    (tmp_path / "terms.md").write_text(
        "Permission is hereby granted, free of charge, to any person"
    )
    (tmp_path / "guide.md").write_text("# Guide\n\nHow to install the tool.")
    ingest(kb, [str(tmp_path)])
    kinds = {d["source"].rsplit("/", 1)[-1]: d["kind"] for d in kb.documents()}
    assert kinds == {"notes.txt": "changelog", "terms.md": "licence", "guide.md": ""}


PAGE = """# The Number of Breaks in Yarn during Weaving

## Description

The number of warp breaks per loom, where a loom corresponds to a fixed length of yarn.

## Format

A data frame with 54 observations on 3 variables.
"""


def test_each_chunk_is_stored_under_the_page_and_heading_it_belongs_to(kb, tmp_path):
    (tmp_path / "warpbreaks.md").write_text(PAGE)
    ingest(kb, [str(tmp_path / "warpbreaks.md")])
    [hit] = kb.search("How many variables does warpbreaks have?", 1, "keyword")
    title = "The Number of Breaks in Yarn during Weaving"  # the file's name is not in it
    line = f"warpbreaks: {title} > Format"  # the H1, its title, said once
    assert hit.page_content.startswith(f"{line}\n\n## Format\n\nA data frame")
    assert hit.metadata["context"] == line
    assert body(hit).startswith("## Format")
    chunks = kb.chunks_of(str(hit.metadata["doc_id"]))
    assert joined([body(c) for c in chunks]) == (  # the page's text, no context line in it
        "## Description\n\nThe number of warp breaks per loom, where a loom corresponds to a "
        "fixed length of yarn.\n## Format\n\nA data frame with 54 observations on 3 variables."
    )


def test_a_store_chunked_another_way_is_read_again(kb, tmp_path, monkeypatch):
    (tmp_path / "warpbreaks.md").write_text(PAGE)
    monkeypatch.setattr("crag.ingest.CHUNKING", 1)
    assert len(ingest(kb, [str(tmp_path)]).added) == 1
    assert len(ingest(kb, [str(tmp_path)]).unchanged) == 1
    monkeypatch.undo()
    assert len(ingest(kb, [str(tmp_path)]).replaced) == 1  # chunked as this version does
    assert len(ingest(kb, [str(tmp_path)]).unchanged) == 1
