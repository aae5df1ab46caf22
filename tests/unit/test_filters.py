"""Metadata filters: parsed from text, applied to dense and keyword search alike, never silent."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document

from benchmarks.fixtures.sample_files import make_pdf
from crag.ingest import ingest
from crag.run import run_question
from crag_core.clients.knowledge_base import KnowledgeBase, ModeRetriever
from crag_core.clients.services import Services
from crag_core.errors import ConfigError
from crag_core.schema.context import Context
from crag_core.text.filters import parse_where
from graph.graph import build_graph
from tests.fakes import FakeWebSearch, HashEmbeddings, doc, happy_responder, make_llm


@pytest.fixture
def kb(tmp_path):
    kb = KnowledgeBase(tmp_path / "chroma", "filters", HashEmbeddings())
    make_pdf(tmp_path / "report.pdf", pages=2)
    (tmp_path / "notes.md").write_text("# Notes\n\nThe river Velna floods every spring, notes say.")
    ingest(kb, [str(tmp_path / "report.pdf"), str(tmp_path / "notes.md")])
    return kb


def test_conditions_become_one_chroma_filter(tmp_path):
    assert parse_where("") is None
    assert parse_where("type=pdf") == {"type": {"$eq": "pdf"}}
    both = parse_where("type!=html, modified>=2026-01-01, page<3")
    assert both == {
        "$and": [
            {"type": {"$ne": "html"}},
            {"modified": {"$gte": 1767225600}},
            {"page": {"$lt": 3}},
        ]
    }
    relative = parse_where(f"source={tmp_path.name}/a.pdf")
    assert relative is not None and relative["source"]["$eq"].startswith(
        "/"
    )  # paths are made absolute, as stored


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("type", "Cannot read"),
        ("colour=red", "Unknown filter key"),
        ("type>=pdf", "= or != only"),
        ("modified>=yesterday", "YYYY-MM-DD"),
        ("page=two", "whole number"),
    ],
)
def test_unreadable_filters_are_clear_errors(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_where(text)
    with pytest.raises(ConfigError, match="where="):
        Context(where=text)


@pytest.mark.parametrize("mode", ["dense", "keyword", "hybrid"])
def test_a_filter_limits_every_retrieval_mode(kb, mode):
    hits = kb.search("Velna river floods every spring", 10, mode, parse_where("type=pdf"))
    assert hits and {h.metadata["type"] for h in hits} == {"pdf"}
    page2 = kb.search("Velna river floods", 10, mode, parse_where("type=pdf,page=2"))
    assert page2 and {h.metadata["page"] for h in page2} == {2}
    unfiltered = kb.search("Velna river floods every spring", 10, mode)
    assert {h.metadata["type"] for h in unfiltered} == {"pdf", "markdown"}


def test_a_filter_that_matches_nothing_stops_the_run_instead_of_searching_the_web(kb):
    web_searches: list[str] = []

    class RecordingWeb:
        name = "recording"

        def search(self, query: str, k: int) -> list[Document]:
            web_searches.append(query)
            return []

    def services(ctx: Context) -> Services:
        retriever = ModeRetriever(kb, ctx.retrieval_mode, parse_where(ctx.where))
        return Services(
            llm=make_llm(happy_responder), retriever=retriever, web_search=RecordingWeb()
        )

    graph = build_graph(services=services)
    with pytest.raises(ConfigError, match="No document in collection 'filters' matches"):
        run_question("Does the Velna flood?", Context(where="type=docx"), graph=graph)
    assert web_searches == []
    result = run_question("Does the Velna flood?", Context(where="type=pdf"), graph=graph)
    assert {d.metadata["type"] for s in result.steps for d in s.update.get("documents", [])} == {
        "pdf"
    }


def test_the_filter_is_a_context_field_with_an_env_fallback(monkeypatch):
    monkeypatch.setenv("CRAG_WHERE", "type=pdf")
    assert Context().where == "type=pdf"
    assert Context(where="type=html").where == "type=html"


def test_the_cli_refuses_an_unreadable_filter(hash_kb):
    from typer.testing import CliRunner

    from crag.cli import app

    result = CliRunner().invoke(app, ["ask", "Who?", "--where", "colour=red"])
    assert result.exit_code == 2 and "Unknown filter key 'colour'" in result.output


def test_one_of_several_values():
    assert parse_where("type=csv|xlsx") == {"type": {"$in": ["csv", "xlsx"]}}
    assert parse_where("type!=csv|xlsx") == {"type": {"$nin": ["csv", "xlsx"]}}


def test_a_question_that_names_its_documents_searches_only_those(kb):
    web = FakeWebSearch([doc("web1", "The Velna floods in spring, the web says.")])

    def services(ctx: Context) -> Services:
        retriever = ModeRetriever(kb, ctx.retrieval_mode, parse_where(ctx.where))
        return Services(llm=make_llm(happy_responder), retriever=retriever, web_search=web)

    graph = build_graph(services=services)

    def searched(question: str) -> tuple[set[str], Any]:
        result = run_question(question, Context(), graph=graph)
        (found,) = [s.update["documents"] for s in result.steps if s.node == "retrieve"]
        return {d.metadata["type"] for d in found}, result

    types, result = searched("According to the PDFs, does the river Velna flood every spring?")
    assert types == {"pdf"} and result.state["plan"]["where"] == "type=pdf"
    assert "type=pdf" in next(s.summary for s in result.steps if s.node == "choose_tool")
    types, _ = searched("In the Markdown files, does the river Velna flood every spring?")
    assert types == {"markdown"}
    types, _ = searched("Does the river Velna flood every spring?")
    assert types == {"pdf", "markdown"}
    # A scope the collection has no document of is said, not dropped.
    web.queries.clear()
    _, result = searched("In my spreadsheets, does the river Velna flood every spring?")
    assert result.pass_state["unfilled"].startswith("No document in the collection matches")
    assert "type=csv|xlsx" in result.state["answer"]
    assert web.queries == []  # a question scoped to its documents is not asked of the web
