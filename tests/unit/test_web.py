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
    settings = client.get("/ui/api/settings").json()
    assert settings["collections"] == ["mykb"]
    assert settings["context"]["collection"] == "mykb" and settings["context"]["top_k"] == 7


def test_bad_settings_are_a_clear_503(monkeypatch):
    monkeypatch.setenv("CRAG_TOP_K", "zero")
    reply = client.get("/ui/api/settings")
    assert reply.status_code == 503 and "CRAG_TOP_K" in reply.json()["detail"]


def test_a_chunk_is_shown_with_its_source(hash_kb, tmp_path):
    (tmp_path / "a.md").write_text("# Alpha\n\nAlpha text about rivers.")
    hash_kb("mykb")
    ingest(tmp_path, "mykb")
    [doc] = hash_kb("mykb").documents()
    chunk = client.get(f"/ui/api/collections/mykb/chunks/{doc['doc_id']}__c0000").json()
    assert "Alpha text about rivers." in chunk["text"]
    assert chunk["source"] == str(tmp_path / "a.md") and chunk["title"] == "Alpha"

    missing = client.get(f"/ui/api/collections/mykb/chunks/{doc['doc_id']}__c0009")
    assert missing.status_code == 404
    assert client.get("/ui/api/collections/other/chunks/x").status_code == 404
    assert client.get("/ui/api/settings").json()["collections"] == ["mykb"]  # none created
