"""The page's own routes (``crag.web``): settings and a stored chunk, never creating anything."""

from __future__ import annotations

from starlette.testclient import TestClient
from typer.testing import CliRunner

from crag.cli import app as cli
from crag.web import app

client = TestClient(app)


def ingest(folder, collection: str) -> None:
    done = CliRunner().invoke(cli, ["ingest", str(folder), "--collection", collection])
    assert done.exit_code == 0, done.output


def test_the_page_and_its_redirect_are_served():
    assert client.get("/ui", follow_redirects=False).headers["location"] == "/ui/"
    page = client.get("/ui/")
    assert page.status_code == 200 and '<script type="module" src="app.js">' in page.text
    assert client.get("/ui/app.js").headers["content-type"].startswith("text/javascript")


def test_settings_are_the_servers_effective_ones(hash_kb, tmp_path, monkeypatch):
    monkeypatch.setenv("CRAG_COLLECTION", "mykb")
    monkeypatch.setenv("CRAG_TOP_K", "7")
    (tmp_path / "a.md").write_text("# A\n\nAlpha text.")
    hash_kb("mykb")
    ingest(tmp_path, "mykb")
    settings = client.get("/crag/settings").json()
    assert settings["collections"] == ["mykb"]
    assert settings["context"]["collection"] == "mykb" and settings["context"]["top_k"] == 7


def test_bad_settings_are_a_clear_503(monkeypatch):
    monkeypatch.setenv("CRAG_TOP_K", "zero")
    reply = client.get("/crag/settings")
    assert reply.status_code == 503 and "CRAG_TOP_K" in reply.json()["detail"]


def test_a_chunk_is_shown_with_its_source(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\n## Rivers\n\nAlpha text about rivers.")
    hash_kb("mykb")
    ingest(tmp_path, "mykb")
    [doc] = hash_kb("mykb").documents()
    chunk = client.get(f"/crag/collections/mykb/chunks/{doc['doc_id']}__c0000").json()
    assert chunk["text"] == "## Rivers\n\nAlpha text about rivers."  # not its context line
    assert chunk["location"] == "Alpha > Rivers"
    # Shown by its label (the folder given and the file), never by its path on the server.
    assert chunk["source"] == f"{tmp_path.name}/a.md" and chunk["title"] == "Alpha"
    assert str(tmp_path) not in str(chunk)

    missing = client.get(f"/crag/collections/mykb/chunks/{doc['doc_id']}__c0009")
    assert missing.status_code == 404
    assert client.get("/crag/collections/other/chunks/x").status_code == 404
    assert client.get("/crag/settings").json()["collections"] == ["mykb"]  # none created


def test_files_are_uploaded_listed_replaced_and_removed(hash_kb, data_dir):
    hash_kb("papers")
    guide = b"# Guide\n\n## Install\n\nRun the installer on Linux.\n"
    added = client.put("/crag/collections/papers/files/guide.md", content=guide)
    assert added.status_code == 200 and added.json()["status"] == "added", added.text
    assert added.json()["chunks"] == 1
    table = b"gauge,level\nVelna bridge,4.2 m\n"
    assert (
        client.put("/crag/collections/papers/files/levels.csv", content=table).json()["status"]
        == "added"
    )
    again = client.put("/crag/collections/papers/files/guide.md", content=guide)
    assert again.json()["status"] == "unchanged"
    changed = client.put("/crag/collections/papers/files/guide.md", content=guide + b"More.\n")
    assert changed.json()["status"] == "replaced"

    [summary] = client.get("/crag/collections").json()["collections"]
    assert summary["name"] == "papers" and summary["documents"] == 2 and summary["chunks"] == 2
    docs = client.get("/crag/collections/papers/documents").json()["documents"]
    md = next(d for d in docs if d["type"] == "markdown")
    assert md["headings"] == ["Guide > Install"] and md["chunks"] == 1
    kept = data_dir / "uploads" / "papers"
    assert sorted(p.name for p in kept.iterdir()) == ["guide.md", "levels.csv"]

    gone = client.delete(f"/crag/collections/papers/documents/{md['doc_id']}")
    assert gone.status_code == 200 and gone.json()["chunks_removed"] == 1
    assert sorted(p.name for p in kept.iterdir()) == ["levels.csv"]  # the upload goes too
    assert client.delete(f"/crag/collections/papers/documents/{md['doc_id']}").status_code == 404
    assert [d["type"] for d in hash_kb("papers").documents()] == ["csv"]


def test_a_file_crag_cannot_read_is_refused_and_not_kept(hash_kb, data_dir, monkeypatch):
    hash_kb("papers")
    clip = client.put("/crag/collections/papers/files/clip.mp4", content=b"\x00\x00\x00 ftyp")
    assert clip.status_code == 422 and "unsupported file type '.mp4'" in clip.json()["detail"]
    png = client.put("/crag/collections/papers/files/photo.png", content=b"\x89PNG")
    assert png.status_code == 422 and "unreadable image" in png.json()["reason"]
    broken = client.put("/crag/collections/papers/files/deck.pptx", content=b"PK\x03\x04 no")
    assert broken.status_code == 422 and broken.json()["status"] == "skipped"
    assert "unreadable" in broken.json()["reason"]
    monkeypatch.setattr("crag.web.MAX_FILE_BYTES", 1000)
    big = client.put("/crag/collections/papers/files/big.md", content=b"# Big\n" + b"x" * 2000)
    assert big.status_code == 413 and "larger than" in big.json()["detail"]

    def chunked():  # no Content-Length: the cap is applied while reading
        yield b"# Big\n"
        yield b"x" * 2000

    streamed = client.put("/crag/collections/papers/files/big.md", content=chunked())
    assert streamed.status_code == 413
    assert not (data_dir / "uploads" / "papers").exists()  # nothing written, not even a folder
    assert hash_kb("papers").count() == 0
    hidden = client.put("/crag/collections/papers/files/.env.md", content=b"# x\n\ny")
    assert hidden.status_code == 422


def test_upload_names_cannot_leave_the_uploads_folder():
    from crag.ingest import upload_name

    assert upload_name("../../etc/notes.md") == "notes.md"
    assert upload_name("C:\\Users\\me\\notes.md") == "notes.md"


def test_collections_are_created_once_and_reads_create_none(hash_kb):
    assert client.get("/crag/collections/nope/documents").status_code == 404
    assert client.delete("/crag/collections/nope/documents/x").status_code == 404
    assert client.post("/crag/collections/nope/sync").status_code == 404
    assert client.get("/crag/collections").json()["collections"] == []
    hash_kb("fresh")
    assert client.post("/crag/collections", json={"name": "fresh"}).status_code == 201
    assert client.post("/crag/collections", json={"name": "fresh"}).status_code == 200
    assert client.post("/crag/collections", json={"name": "a/b"}).status_code == 400
    assert client.post("/crag/collections", json={}).status_code == 400
    [row] = client.get("/crag/collections").json()["collections"]
    assert row == {"name": "fresh", "documents": 0, "chunks": 0, "last": 0}


def test_resync_reads_changed_files_and_drops_vanished_ones(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nAlpha text.")
    (tmp_path / "b.md").write_text("# B\n\nBeta text.")
    hash_kb("mykb")
    ingest(tmp_path, "mykb")
    (tmp_path / "a.md").write_text("# A\n\nAlpha text, revised.")
    (tmp_path / "b.md").unlink()
    report = client.post("/crag/collections/mykb/sync").json()
    assert report["replaced"] == [f"{tmp_path.name}/a.md"]  # labels, not server paths
    assert report["removed"] == [f"{tmp_path.name}/b.md"]
    assert [d["title"] for d in hash_kb("mykb").documents()] == ["A"]


def test_an_image_chunk_is_shown_as_its_page_with_the_region_of_its_text(hash_kb, tmp_path):
    from benchmarks.fixtures.sample_files import make_page_image

    make_page_image(tmp_path / "receipt.png")
    hash_kb("mykb")
    ingest(tmp_path, "mykb")
    (doc,) = hash_kb("mykb").documents()
    chunk = client.get(f"/crag/collections/mykb/chunks/{doc['doc_id']}__c0000").json()
    assert chunk["type"] == "image" and chunk["page"] is None
    left, top, right, bottom = chunk["box"]  # the first lines of the page, its top left
    assert 0 < left < 0.1 and 0 < top < 0.1 and 0.5 < right < 1 and top < bottom < 0.5
    image = client.get(f"/crag/collections/mykb/chunks/{doc['doc_id']}__c0000/page.png")
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")


def test_urls_are_added_through_the_page_route(hash_kb):
    reply = client.post("/crag/collections/mykb/sources", json={"urls": ["/etc/passwd"]})
    assert reply.status_code == 400 and "http(s)" in reply.json()["detail"]


def test_a_pdf_chunk_is_shown_as_its_page_drawn_by_the_server(hash_kb, tmp_path):
    from benchmarks.fixtures.sample_files import make_pdf

    make_pdf(tmp_path / "report.pdf", pages=3)
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha text.")
    hash_kb("mykb")
    ingest(tmp_path, "mykb")
    pdf = next(d for d in hash_kb("mykb").documents() if d["type"] == "pdf")
    second = f"{pdf['doc_id']}__c0001"
    chunk = client.get(f"/crag/collections/mykb/chunks/{second}").json()
    assert chunk["page"] == 2 and chunk["type"] == "pdf" and chunk["location"] == "page 2"
    assert chunk["box"][1] < 0.1 < chunk["box"][3]  # its text begins at the top of the page
    image = client.get(f"/crag/collections/mykb/chunks/{second}/page.png")
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content.startswith(b"\x89PNG")
    md = next(d for d in hash_kb("mykb").documents() if d["type"] == "markdown")
    not_pdf = client.get(f"/crag/collections/mykb/chunks/{md['doc_id']}__c0000/page.png")
    assert not_pdf.status_code == 404 and "not a chunk of a PDF page" in not_pdf.json()["detail"]
    (tmp_path / "report.pdf").unlink()
    gone = client.get(f"/crag/collections/mykb/chunks/{second}/page.png")
    assert gone.status_code == 404 and "no longer there" in gone.json()["detail"]
