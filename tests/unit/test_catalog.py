"""Questions about the collection: read by rules, answered from the documents' metadata."""

from __future__ import annotations

import datetime as dt
import importlib
import json
from typing import Any

import pytest

from crag.run import run_question
from crag_core.schema.context import Context
from crag_core.text.catalog import (
    CatalogQuery,
    catalog_answer,
    catalog_query,
    date_range,
    question_scope,
    select,
)
from crag_core.text.filters import parse_where
from tests.fakes import FakeRetriever, doc

TODAY = dt.date(2026, 11, 26)  # a Thursday


def stamp(day: str) -> int:
    return int(dt.datetime.fromisoformat(day + "T12:00:00").timestamp())


DOCS: list[dict[str, Any]] = [
    {"doc_id": "a", "label": "notes/plan.md", "type": "markdown", "modified": stamp("2025-03-14")},
    {"doc_id": "b", "label": "report.pdf", "type": "pdf", "modified": stamp("2025-03-02")},
    {"doc_id": "c", "label": "budget.xlsx", "type": "xlsx", "modified": stamp("2025-04-01")},
    {"doc_id": "d", "label": "old.pdf", "type": "pdf", "modified": stamp("2023-07-09")},
    {"doc_id": "e", "label": "https://example.org/guide", "type": "html"},  # no date known
]


@pytest.mark.parametrize(
    ("question", "kind", "said"),
    [
        ("How many PDFs are there?", "count", ("of type pdf",)),
        ("How many documents are in my collection?", "count", ()),
        ("Which files were modified in March 2025?", "list", ("modified in March 2025",)),
        ("What spreadsheets do I have?", "list", ("of type csv, xlsx",)),
        ("List my documents", "list", ()),
        ("Which of my files were added last week?", "list", ("ingested last week",)),
        ("Which documents cover packet switching?", "list", ("about 'packet switching'",)),
        ("Which documents discuss the 2016 season?", "list", ("about 'the 2016 season'",)),
        ("List all the .txt files.", "list", ("of type text",)),
        ("How many .md files are there?", "count", ("of type markdown",)),
        ("Which htm documents do I have?", "list", ("of type html",)),
    ],
)
def test_questions_about_the_collection(question, kind, said):
    query = catalog_query(question, TODAY)
    assert query is not None and query.kind == kind and query.said == said


@pytest.mark.parametrize(
    "question",
    [
        "Which team won Super Bowl 50?",
        "How many pages did the first edition have?",
        "How many documents did the treaty include?",  # documents, but of the treaty
        "What does the document say about renewal?",
        "How many penguins were recorded in 2008?",
        "How many files does report.pdf cite?",  # a file's name, not a type
    ],
)
def test_other_questions_are_not(question):
    assert catalog_query(question, TODAY) is None


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("in March 2025", "2025-03-01", "2025-04-01"),
        ("in dec 2024", "2024-12-01", "2025-01-01"),
        ("in 2024", "2024-01-01", "2025-01-01"),
        ("on 2025-02-28", "2025-02-28", "2025-03-01"),
        ("today", "2026-11-26", "2026-11-27"),
        ("yesterday", "2026-11-25", "2026-11-26"),
        ("this week", "2026-11-23", "2026-11-30"),
        ("last week", "2026-11-16", "2026-11-23"),
        ("last month", "2026-10-01", "2026-11-01"),
        ("this year", "2026-01-01", "2027-01-01"),
        ("in the last 10 days", "2026-11-16", "2026-11-27"),
        ("since March 2025", "2025-03-01", None),
        ("after March 2025", "2025-04-01", None),
        ("before 2024", None, "2024-01-01"),
        ("between March 2024 and September 2025", "2024-03-01", "2025-10-01"),
        ("from 2022 to 2023", "2022-01-01", "2024-01-01"),
        ("between the lines", None, None),
        ("at some point", None, None),
    ],
)
def test_dates_resolved_against_today(text, start, end):
    got = date_range(text, TODAY)
    as_text = tuple(d.isoformat() if d else None for d in got[:2])
    assert as_text == (start, end)


def test_the_filter_applies_to_the_stored_metadata():
    march = catalog_query("Which files were modified in March 2025?", TODAY)
    assert march is not None
    assert [d["doc_id"] for d in select(march, DOCS)] == ["a", "b"]
    pdfs = catalog_query("Which PDFs were modified since 2024?", TODAY)
    assert pdfs is not None and [d["doc_id"] for d in select(pdfs, DOCS)] == ["b"]
    count = catalog_query("How many documents do I have?", TODAY)
    assert count is not None and catalog_answer(count, ["x", "y"]) == "2"
    none = catalog_query("Which PDFs were modified last month?", TODAY)
    assert none is not None and select(none, DOCS) == []
    assert catalog_answer(none, []) == (
        "None: the collection holds no document of type pdf modified last month."
    )
    assert catalog_answer(march, [f"f{i}" for i in range(25)]).endswith("f19 (and 5 more)")


def services_with(fake_services: Any, docs: list[dict[str, Any]], hits: list[Any]) -> Any:
    services = fake_services(retriever=FakeRetriever(hits))
    object.__setattr__(services, "documents", lambda: docs)
    return services


def test_the_graph_answers_from_the_catalog_without_a_model(fake_services, monkeypatch):

    class Today(dt.date):
        @classmethod
        def today(cls):
            return TODAY

    module = importlib.import_module("nodes.tools.choose_tool")  # the module, not the node
    monkeypatch.setattr(module.dt, "date", Today)
    services = services_with(fake_services, DOCS, [])
    result = run_question("Which files were modified in March 2025?", Context())
    assert result.path[3:] == ["choose_tool", "query_catalog", "finalize"]
    assert result.state["answer"] == "notes/plan.md, report.pdf"
    assert [s["source"] for s in result.state["sources"]] == ["notes/plan.md", "report.pdf"]
    assert services.llm.calls == []


def test_a_topic_keeps_the_documents_the_search_finds(fake_services):
    hits = [
        doc("b__c0001", "Packet switching groups data.", 0.7),
        doc("c__c0000", "A budget line.", 0.1),  # under the similarity floor
    ]
    for hit, doc_id in zip(hits, ["b", "c"], strict=True):
        hit.metadata["doc_id"] = doc_id
    services_with(fake_services, DOCS, hits)
    result = run_question("Which documents cover packet switching?", Context())
    assert result.state["answer"] == "report.pdf"


def test_a_topic_in_a_document_s_name_is_covered(fake_services):
    services_with(fake_services, DOCS, [])
    result = run_question("Which documents discuss the budget?", Context())
    assert result.state["answer"] == "budget.xlsx"


def test_a_catalog_answer_s_confidence_reads_how_its_question_was_read(fake_services):
    from nodes.shared.confidence import tool_confidence

    services_with(fake_services, DOCS, [])
    typed = run_question("How many PDFs do I have?", Context()).state
    topic = run_question("Which documents discuss the budget?", Context()).state
    assert typed["answer_kind"] == topic["answer_kind"] == "catalog"
    assert typed["tool_signals"]["typed"] == 1.0 and topic["tool_signals"]["topic"] == 1.0
    assert typed["confidence"] == tool_confidence("catalog", typed["tool_signals"])
    assert typed["confidence"] > topic["confidence"]  # the shipped fit: a topic is less sure


@pytest.mark.parametrize(
    ("question", "where"),
    [
        ("According to the PDFs, who won Super Bowl 50?", "type=pdf"),
        ("In my spreadsheets, what is the total?", "type=csv|xlsx"),
        ("In the Markdown files, what is a ctenophore?", "type=markdown"),
        ("From the Word documents, what did the board decide?", "type=docx"),
        ("According to the .txt files, what does the FAQ answer?", "type=text"),
        (
            "In the documents modified in 2024, who won?",
            "modified>=2024-01-01,modified<2025-01-01",
        ),
        ("In files added last week, what changed?", "ingested>=2026-11-16,ingested<2026-11-23"),
        ("In the PDF files modified since March 2025, what is X?", "type=pdf,modified>=2025-03-01"),
        ("In other words, what is it?", None),  # "words" is no file type
        ("What is in the HTML specification?", None),
        ("Who won, according to the documents?", None),  # every document: no filter
        ("What did the team find in the tables of results?", None),
    ],
)
def test_the_documents_a_question_limits_its_search_to(question, where):
    scope = question_scope(question, TODAY)
    assert (scope.where if scope else None) == where


@pytest.mark.parametrize(
    ("question", "where"),
    [
        (
            "How many PDFs were modified in March 2025?",
            "type=pdf,modified>=2025-03-01,modified<2025-04-01",
        ),
        ("List my spreadsheets", "type=csv|xlsx"),
        ("Which files were added yesterday?", "ingested>=2026-11-25,ingested<2026-11-26"),
        ("Which documents cover packet switching?", ""),  # a topic is no metadata filter
    ],
)
def test_a_catalog_question_s_filter_in_the_where_language(question, where):
    query = catalog_query(question, TODAY)
    assert query is not None and query.where == where
    if where:  # one the filter parser reads back
        assert parse_where(where)


KINDS_DOCS: list[dict[str, Any]] = [
    *DOCS,
    {
        "doc_id": "f",
        "label": "pkg/CHANGELOG.md",
        "type": "markdown",
        "modified": stamp("2024-01-02"),
    },
    {"doc_id": "g", "label": "LICENSE.txt", "type": "text", "modified": stamp("2022-05-05")},
    {
        "doc_id": "h",
        "label": "changes-in-policy.pdf",
        "type": "pdf",
        "modified": stamp("2024-02-02"),
    },
]


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        ("Which of my files are changelogs?", ["pkg/CHANGELOG.md", "changes-in-policy.pdf"]),
        ("Which of my files are licences?", ["LICENSE.txt"]),
        ("Which of my documents changed last?", ["budget.xlsx"]),
        ("What is the newest file in my collection?", ["budget.xlsx"]),
        ("Which is my oldest document?", ["LICENSE.txt"]),
        ("Which PDF was modified first?", ["old.pdf"]),
        ("Which PDFs were modified most recently?", ["report.pdf"]),
        ("How many HTML pages do I have?", ["https://example.org/guide"]),
    ],
)
def test_the_catalog_by_what_files_are_and_the_newest_or_oldest(question, kept):
    query = catalog_query(question, TODAY)
    assert query is not None
    assert [d["label"] for d in select(query, KINDS_DOCS)] == kept


@pytest.mark.parametrize(
    "question",
    [
        "Which files were modified in March 2025?",
        "Which of my files were added last week?",
        "Which documents cover packet switching?",
        "Which PDFs were modified most recently?",
        "Which of my files are changelogs?",
        "How many spreadsheets do I have?",
    ],
)
def test_a_catalog_query_travels_in_the_plan_as_json_and_back(question):
    query = catalog_query(question, TODAY)
    assert query is not None
    written = json.loads(json.dumps(query.as_json()))
    assert CatalogQuery.from_json(written) == query


def test_last_week_is_a_range_not_the_newest():
    query = catalog_query("Which files were modified last week?", TODAY)
    assert query is not None and query.order == "" and query.start is not None


def test_the_reading_names_the_words_it_left_unused():
    from crag_core.text.catalog import unread

    today = dt.date(2026, 11, 29)
    read_all = catalog_query("How many PDFs were modified in March 2025?", today)
    assert (
        read_all is not None
        and unread("How many PDFs were modified in March 2025?", read_all) == []
    )
    asked = "Which of my files about budgets were written by Alice?"
    query = catalog_query(asked, today)
    assert query is not None and {"budgets", "written", "alice"} <= set(unread(asked, query))
    topic = "Which documents discuss packet switching?"
    query = catalog_query(topic, today)
    assert query is not None and unread(topic, query) == []  # the topic's words are read


def test_a_catalog_answer_carries_how_its_question_was_read():
    from nodes.shared.confidence import catalog_signals

    today = dt.date(2026, 11, 29)
    query = catalog_query("Which of my files are changelogs from 2024?", today)
    assert query is not None
    signals = catalog_signals("Which of my files are changelogs from 2024?", query, 0)
    assert signals["named"] == 1.0 and signals["dated"] == 1.0 and signals["none"] == 1.0
    assert signals["unread"] == 0.0 and signals["typed"] == 0.0 and signals["topic"] == 0.0


def test_a_document_s_kind_is_read_from_what_it_says():
    from crag_core.text.catalog import text_kind

    keep_a_changelog = [
        ("Changelog", "All notable changes to this project will be documented in this file."),
        ("Changelog > [1.2.4] - 2026-10-01 > Fixed", "- empty values"),
        ("Changelog > [1.2.3] - 2026-08-16 > Fixed", "- a leading BOM"),
    ]
    assert text_kind("markdown", keep_a_changelog) == "changelog"
    debian = (
        "pkg (1.2-3) unstable; urgency=medium\n\n  * Fix.\n\npkg (1.2-2) unstable; urgency=low\n"
    )
    assert text_kind("text", [("", debian)]) == "changelog"
    news = "Release notes\n\n5.4.1 (2023-01-11)\n\n  * Fixed.\n\n5.4.0 (2022-12-13)\n  * New.\n"
    assert text_kind("text", [("", news)]) == "changelog"
    spec = "The File Format\nVersion 1.1.0 (2022-12-11)\n0.1. Notices\n0.2. Getting the latest\n"
    assert text_kind("docx", [("", spec)]) == ""  # numbered sections, one version: no changelog
    mit = "MIT License\n\nPermission is hereby granted, free of charge, to any person obtaining"
    assert text_kind("markdown", [("", mit)]) == "licence"
    assert text_kind("csv", [("", mit)]) == ""  # a table is neither
    assert text_kind("text", [("", "How to install the tool.\n1.2 Requirements")]) == ""


def test_the_catalog_keeps_a_document_of_a_kind_by_what_it_says_or_its_name():
    query = CatalogQuery("list", named="changelog")
    docs = [
        {"doc_id": "a", "label": "HISTORY.rst"},
        {"doc_id": "b", "label": "sqlite3-notes.txt", "kind": "changelog"},
        {"doc_id": "c", "label": "guide.md", "kind": ""},
    ]
    assert [d["doc_id"] for d in select(query, docs)] == ["a", "b"]


def test_a_hostile_opening_is_read_in_bounded_time():
    import time

    from crag_core.text.catalog import text_kind

    start = time.perf_counter()  # spaces after a version once backtracked for minutes
    for line in ("# v1.2 " + "\t" * 5000 + "x", "- " * 99 + "x", "pkg (1" + "x" * 5000):
        assert text_kind("text", [("", (line + "\n") * 3)]) == ""
    assert time.perf_counter() - start < 1.0
