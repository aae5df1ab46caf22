"""Sources the API cannot forge: inline documents stay inline, a sync reads only what crag read,
and callers see labels, never the server's paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from crag import ingest
from crag.cli import app as cli
from crag.indexer import graph as indexer
from crag.web import app
from crag_core.errors import KnowledgeBaseError
from crag_core.text.sources import origin_of, public_source

client = TestClient(app)
SECRET = "server secret 5521"


def index(collection: str, **given: Any) -> dict[str, Any]:
    report: dict[str, Any] = cast(Any, indexer).invoke(given, context={"collection": collection})[
        "report"
    ]
    return report


def texts(kb) -> str:
    return " ".join(c.page_content for d in kb.documents() for c in kb.chunks_of(d["doc_id"]))


@pytest.fixture
def server_files(tmp_path: Path) -> Path:
    """A file outside every collection, and a folder of another user's uploads."""
    (tmp_path / "secret.md").write_text(f"# Secret\n\n{SECRET}.")
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "plans.md").write_text(f"# Plans\n\n{SECRET} in a folder.")
    return tmp_path


def test_an_inline_source_is_a_name_that_no_sync_reads(hash_kb, server_files):
    report = index(
        "bobs",
        docs=[
            {
                "page_content": "Bob's note.",
                "metadata": {"source": str(server_files / "secret.md")},
            },
            {"page_content": "Bob's list.", "metadata": {"source": str(server_files / "alice")}},
        ],
    )
    assert len(report["added"]) == 2
    for _ in range(2):  # the indexer's sync and the page's sync route
        assert index("bobs", sync=True)["added"] == []
        assert client.post("/crag/collections/bobs/sync").json()["added"] == []
    kb = hash_kb("bobs")
    assert SECRET not in texts(kb) and {origin_of(d) for d in kb.documents()} == {"inline"}
    assert sorted(d["chunks"] for d in kb.documents()) == [1, 1]  # as sent, nothing replaced


def test_a_document_stored_before_origins_were_kept_is_told_apart(hash_kb, server_files):
    kb = hash_kb("legacy")
    kb.replace_document(  # inline, as the indexer stored it: no origin, no modification time
        "legacy-1", str(server_files / "secret.md"), "h", ["old inline text"], [{"type": "text"}]
    )
    assert origin_of(kb.documents()[0]) == "inline"
    assert ingest.resync(kb).added == [] and SECRET not in texts(kb)
    assert origin_of({"source": "/a/b.md", "modified": 1}) == "file"
    assert origin_of({"source": "https://x.org/a", "modified": 1}) == "url"


def test_callers_see_labels_and_the_cli_sees_paths(hash_kb, server_files):
    done = CliRunner().invoke(
        cli, ["ingest", str(server_files / "alice"), "--collection", "mine", "--json"]
    )
    assert done.exit_code == 0 and str(server_files / "alice" / "plans.md") in done.output
    [doc] = client.get("/crag/collections/mine/documents").json()["documents"]
    assert doc["source"] == "alice/plans.md" and "label" not in doc
    chunk = client.get(f"/crag/collections/mine/chunks/{doc['doc_id']}__c0000").json()
    assert chunk["source"] == "alice/plans.md"
    (server_files / "alice" / "plans.md").write_text("# Plans\n\nChanged plans.")
    report = client.post("/crag/collections/mine/sync").json()
    assert report["replaced"] == ["alice/plans.md"] and str(server_files) not in str(report)
    assert public_source({"source": "https://u:p@x.org/a", "modified": 1}) == "https://x.org/a"
    assert public_source({"source": "/srv/docs/a.pdf", "modified": 1}) == "a.pdf"


def test_a_url_is_stored_without_its_password(hash_kb, monkeypatch):
    from crag_core.formats import fetch_url

    def fake(url, **_):
        assert url.startswith("https://bob:hunter2@")  # the CLI sends it, as its user asked
        return fetch_url.Fetched("https://docs.example/a.md", b"# A\n\nText.", "markdown", 1)

    monkeypatch.setattr(ingest, "fetch", fake)
    report = ingest.ingest(hash_kb("web"), ["https://bob:hunter2@docs.example/a.md"])
    assert report.added == ["https://docs.example/a.md"]
    [doc] = hash_kb("web").documents()
    assert doc["source"] == "https://docs.example/a.md" and "hunter2" not in str(doc)


def test_a_damaged_file_fails_and_the_rest_of_its_folder_is_ingested(hash_kb, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nFine text.")
    (folder / "bad.docx").write_bytes(b"PK\x03\x04 not really a zip archive")
    done = CliRunner().invoke(cli, ["ingest", str(folder), "--collection", "mixed"])
    assert done.exit_code == 1, done.output  # a failure is reported and counted
    assert "1 added" in done.output and "1 failed" in done.output
    line = next(line for line in done.output.splitlines() if "bad.docx" in line)
    assert "failed" in line and "unreadable docx file" in line
    assert [d["title"] for d in hash_kb("mixed").documents()] == ["Good"]


def test_an_upload_that_cannot_be_stored_leaves_nothing_behind(hash_kb, data_dir, monkeypatch):
    kb = hash_kb("ups")
    first = client.put("/crag/collections/ups/files/notes.md", content=b"# Notes\n\nFirst.")
    assert first.json()["status"] == "added"

    def broken(*args: object, **kwargs: object) -> None:
        raise KnowledgeBaseError("the store failed")

    monkeypatch.setattr(type(kb), "replace_documents", broken)
    again = client.put("/crag/collections/ups/files/notes.md", content=b"# Notes\n\nSecond.")
    fresh = client.put("/crag/collections/ups/files/new.md", content=b"# New\n\nNew.")
    assert again.status_code == fresh.status_code == 503
    assert "the store failed" not in again.text  # the reason is in the server's log
    folder = data_dir / ingest.UPLOADS / "ups"
    assert sorted(p.name for p in folder.iterdir()) == ["notes.md"]  # no orphan, no leftover
    assert (folder / "notes.md").read_text() == "# Notes\n\nFirst."  # the earlier one back


def test_an_upload_name_is_bounded():
    with pytest.raises(ingest.SkipFile, match="longer than 200 bytes"):
        ingest.upload_name("a" * 250 + ".md")
    reply = client.put(f"/crag/collections/ups/files/{'a' * 250}.md", content=b"# A\n\nx")
    assert reply.status_code == 422


def test_the_indexer_holds_its_state_to_an_uploads_limits_whatever_wrote_it(tmp_path):
    """The last line: state written past every door's check (a direct update) is not read."""
    from crag.limits import MAX_DOC_CHARS

    long = {"page_content": "word " * (MAX_DOC_CHARS // 5 + 1), "metadata": {"source": "big"}}
    with pytest.raises(ValueError, match="the limit is 2,000,000 a document"):
        index("limits-kb", docs=[long])
    urls = [f"https://example.org/{n}" for n in range(21)]
    with pytest.raises(ValueError, match="21 web pages in one run"):
        index("limits-kb", urls=urls)
    done = index("limits-kb", docs=[{"page_content": "ok " * 3_000, "metadata": {"source": "a"}}])
    assert done["added"] == ["a"]
