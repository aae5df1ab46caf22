"""Collection management: list, show, search, remove, drop, and ``ingest --sync`` (crash-safe)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from benchmarks.fixtures.sample_files import make_pdf
from crag.cli import app

runner = CliRunner()


def crag(*args: str):
    return runner.invoke(app, list(args))


def test_list_shows_collections_then_documents(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nAlpha text.")
    make_pdf(tmp_path / "b.pdf", pages=2)
    assert crag("ingest", str(tmp_path), "--collection", "mykb").exit_code == 0
    listing = crag("kb", "list")
    assert listing.exit_code == 0
    assert "mykb  2 documents, 3 chunks, last ingest 20" in listing.output
    docs = crag("kb", "list", "--collection", "mykb")
    assert "markdown, 1 chunk," in docs.output and "pdf, 2 chunks" in docs.output
    assert str(tmp_path / "b.pdf") in docs.output
    assert crag("kb", "list", "--collection", "nope").exit_code == 2  # a typo creates nothing
    assert "nope" not in crag("kb", "list").output


def test_show_lists_chunks_with_their_page(hash_kb, tmp_path):
    make_pdf(tmp_path / "report.pdf", pages=2)
    crag("ingest", str(tmp_path / "report.pdf"), "--collection", "mykb")
    doc = hash_kb("mykb").documents()[0]["doc_id"]
    shown = crag("kb", "show", doc, "--collection", "mykb")
    assert shown.exit_code == 0
    assert "title 'Velna river report', type pdf" in shown.output
    assert f"{doc}__c0001  page 2" in shown.output
    assert crag("kb", "show", "missing-doc", "--collection", "mykb").exit_code == 2
    for short in ("report", "report.pdf", str(tmp_path / "report.pdf")):  # a start or its file
        assert f"{doc}__c0001  page 2" in crag("kb", "show", short, "--collection", "mykb").output


def test_show_names_the_documents_an_ambiguous_start_matches(hash_kb, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for folder in ("a", "b"):
        (tmp_path / folder / "notes.md").write_text(f"# Notes {folder}\n\nText.")
    crag("ingest", str(tmp_path), "--collection", "mykb")
    ambiguous = crag("kb", "show", "notes", "--collection", "mykb")
    assert ambiguous.exit_code == 2 and "2 documents match 'notes'" in ambiguous.output


def test_remove_by_id_and_by_source(hash_kb, tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    for name in ("a.md", "b.md", "sub/c.md"):
        (folder / name).write_text(f"# {name}\n\nText of {name}.")
    crag("ingest", str(folder), "--collection", "mykb")
    kb = hash_kb("mykb")
    ids = {d["source"]: d["doc_id"] for d in kb.documents()}
    assert crag("kb", "remove", "nope", "--collection", "mykb").exit_code == 2
    assert crag("kb", "remove", ids[str(folder / "a.md")], "--collection", "mykb").exit_code == 0
    source = ("kb", "remove", "--source", str(folder / "sub"), "--collection", "mykb")
    asked = runner.invoke(app, list(source), input="n\n")  # no terminal here: refused
    assert asked.exit_code == 2 and "--yes" in asked.output and len(kb.documents()) == 2
    removed = crag(*source, "--yes")
    assert removed.exit_code == 0 and "1 document removed" in removed.output
    assert [d["source"] for d in kb.documents()] == [str(folder / "b.md")]
    assert sorted(kb.collection.get(include=[])["ids"]) == kb.keywords.chunk_ids()


def test_a_file_is_removed_without_asking(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nAlpha text.")
    crag("ingest", str(tmp_path / "a.md"), "--collection", "mykb")
    removed = crag("kb", "remove", "--source", str(tmp_path / "a.md"), "--collection", "mykb")
    assert removed.exit_code == 0 and "1 document removed; 0 chunks left" in removed.output


def test_drop_asks_then_deletes_the_collection_and_its_keywords(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nAlpha text about rivers.")
    crag("ingest", str(tmp_path), "--collection", "mykb")
    refused = crag("kb", "drop", "mykb")  # no terminal to ask on
    assert refused.exit_code == 2 and "--yes" in refused.output
    assert "mykb" in crag("kb", "list").output
    dropped = crag("kb", "drop", "mykb", "--yes")
    assert dropped.exit_code == 0, dropped.output
    assert "Deleted collection 'mykb': 1 document, 1 chunk." in dropped.output
    assert "mykb" not in crag("kb", "list").output
    assert hash_kb("mykb").keywords.doc_ids() == []
    assert crag("kb", "drop", "mykb", "--yes").exit_code == 2  # gone: a clear error
    assert crag("kb", "drop", "nope", "--yes").exit_code == 2


def test_reads_never_create_a_collection(hash_kb):
    for args in (
        ("kb", "list", "--collection", "typo"),
        ("kb", "show", "some-doc", "--collection", "typo"),
        ("kb", "search", "rivers", "--collection", "typo"),
        ("kb", "remove", "some-doc", "--collection", "typo"),
        ("ask", "Who won?", "--collection", "typo"),
    ):
        result = crag(*args)
        assert result.exit_code == 2 and "No collection 'typo'" in result.output, args
    kb = hash_kb("typo")
    assert kb.count() == 0 and kb.search("rivers", 4, "hybrid") == [] and kb.documents() == []
    assert not kb.exists() and "typo" not in crag("kb", "list").output


def test_json_output_of_ingest_and_kb_commands(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("# Rivers\n\nThe Velna river floods in spring.")
    ingested = json.loads(crag("ingest", str(tmp_path), "--collection", "mykb", "--json").stdout)
    assert ingested["added"] == [str(tmp_path / "a.md")] and ingested["chunks_written"] == 1
    assert ingested["chunks_stored"] == 1 and ingested["failed"] == []
    again = json.loads(crag("ingest", str(tmp_path), "--collection", "mykb", "--json").stdout)
    assert again["unchanged"] == [str(tmp_path / "a.md")] and again["chunks_written"] == 0
    listing = json.loads(crag("kb", "list", "--json").stdout)
    assert listing["collections"][0] | {"last": 0} == {
        "name": "mykb",
        "documents": 1,
        "chunks": 1,
        "last": 0,
    }
    docs = json.loads(crag("kb", "list", "--collection", "mykb", "--json").stdout)["documents"]
    assert [d["source"] for d in docs] == [str(tmp_path / "a.md")]
    shown = json.loads(
        crag("kb", "show", docs[0]["doc_id"], "--collection", "mykb", "--json").stdout
    )
    assert shown["type"] == "markdown" and "floods in spring" in shown["chunks"][0]["text"]
    hits = json.loads(crag("kb", "search", "Velna river", "--collection", "mykb", "--json").stdout)
    assert hits["hits"][0]["id"] == shown["chunks"][0]["id"]
    assert hits["hits"][0]["metadata"]["keyword_rank"] == 1


def test_quiet_ingest_prints_one_line(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("Alpha.")
    result = crag("ingest", str(tmp_path), str(tmp_path / "missing.md"), "-q")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("failed") and lines[-1].startswith("Ingested into crag: 1 added")


def test_sync_removes_documents_whose_files_are_gone_and_nothing_else(hash_kb, tmp_path):
    folder, other = tmp_path / "docs", tmp_path / "other.md"
    folder.mkdir()
    for name in ("keep.md", "gone.md"):
        (folder / name).write_text(f"# {name}\n\nText of {name}.")
    other.write_text("# Other\n\nOutside the folder.")
    crag("ingest", str(folder), str(other), "--collection", "mykb")
    (folder / "gone.md").unlink()
    other.unlink()  # gone too, but not under the synced folder
    result = crag("ingest", str(folder), "--sync", "--collection", "mykb")
    assert result.exit_code == 0 and "1 removed" in result.output
    assert "gone.md: its file is gone" in result.output
    sources = sorted(d["source"] for d in hash_kb("mykb").documents())
    assert sources == sorted([str(other), str(folder / "keep.md")])


def test_a_removal_cut_short_is_finished_by_the_next_sync(hash_kb, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAlpha text.")
    (folder / "b.md").write_text("# B\n\nBeta text.")
    crag("ingest", str(folder), "--collection", "mykb")
    kb = hash_kb("mykb")
    victim = next(d["doc_id"] for d in kb.documents() if d["source"].endswith("b.md"))
    # Killed between the two writes: gone from Chroma, still in the keyword index.
    kb.collection.delete(ids=kb.collection.get(where={"doc_id": victim}, include=[])["ids"])
    assert victim in kb.keywords.doc_ids()
    assert all(hit.metadata["doc_id"] != victim for hit in kb.search("Beta", 5, "keyword"))
    (folder / "b.md").unlink()
    assert crag("ingest", str(folder), "--sync", "--collection", "mykb").exit_code == 0
    assert victim not in kb.keywords.doc_ids()
    assert sorted(kb.collection.get(include=[])["ids"]) == kb.keywords.chunk_ids()


def test_threads_opening_a_new_store_at_once_share_one_client(data_dir):
    """Parallel parts of a question open the store together (Chroma's opening is not safe)."""
    from concurrent.futures import ThreadPoolExecutor

    from crag_core.clients.knowledge_base import KnowledgeBase
    from tests.fakes import HashEmbeddings

    kbs = [KnowledgeBase(data_dir / "fresh-store", "same-kb", HashEmbeddings()) for _ in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        counts = list(pool.map(lambda kb: kb.count(), kbs))
    assert counts == [0] * 8


def test_progress_counts_a_file_once_its_chunks_are_written(hash_kb, tmp_path):
    from crag.ingest import ingest

    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / name).write_text(f"# {name}\n\nText of {name}.")
    seen: list[tuple[int, int, str]] = []
    ingest(hash_kb("mykb"), [str(tmp_path)], on_progress=lambda *step: seen.append(step))
    assert seen[:3] == [(0, 3, "reading a.md"), (0, 3, "reading b.md"), (0, 3, "reading c.md")]
    assert seen[3:] == [
        (0, 3, "embedding and writing: 0 of 3 chunks"),
        (3, 3, "embedding and writing: 3 of 3 chunks"),
        (3, 3, "done"),
    ]


def test_status_says_missing_empty_or_filled(hash_kb, tmp_path):
    kb = hash_kb("mykb")
    assert kb.status() == "missing"
    (tmp_path / "a.md").write_text("# A\n\nAlpha text.")
    crag("ingest", str(tmp_path), "--collection", "mykb")
    assert kb.status() == "filled"
    crag("kb", "remove", "--source", str(tmp_path), "--yes", "--collection", "mykb")
    assert kb.status() == "empty"
