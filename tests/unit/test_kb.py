"""Collection management: list, show, remove, and ``ingest --sync`` (crash-safe)."""

from __future__ import annotations

from typer.testing import CliRunner

from benchmarks.sample_files import make_pdf
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
    assert "markdown, 1 chunks" in docs.output and "pdf, 2 chunks" in docs.output
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
    removed = crag("kb", "remove", "--source", str(folder / "sub"), "--collection", "mykb")
    assert removed.exit_code == 0 and "1 removed" in removed.output
    assert [d["source"] for d in kb.documents()] == [str(folder / "b.md")]
    assert sorted(kb.collection.get(include=[])["ids"]) == kb.keywords.chunk_ids()


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

    from adapters.knowledge_base import KnowledgeBase
    from tests.fakes import HashEmbeddings

    kbs = [KnowledgeBase(data_dir / "fresh-store", "same-kb", HashEmbeddings()) for _ in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        counts = list(pool.map(lambda kb: kb.count(), kbs))
    assert counts == [0] * 8
