"""query_catalog: answer a question about the collection from its documents' metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate, Source
from crag_core.text.catalog import CatalogQuery, catalog_answer, named_by, select
from crag_core.text.sources import document_name
from crag_core.text.words import plural
from nodes.shared.common import question_of, reports
from nodes.shared.confidence import catalog_signals, tool_confidence

MAX_SOURCES = 20
"""Documents an answer cites at most."""


def describe(update: Mapping[str, Any]) -> str:
    """How many documents matched, and the answer."""
    cited = plural(len(update.get("sources") or []), "document")
    return f"{cited} cited -> {update.get('answer')!r}"


@reports(describe)
def query_catalog(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Count or list the collection's documents that fit the question's filter.

    The filter (file types, a date range on when files were modified or ingested, resolved
    against the day it was asked; a topic) is the plan's (``choose_tool``) and is applied to the
    documents' stored metadata; a topic keeps the documents whose chunks the text search finds
    at or above ``min_similarity``, or whose title or name holds it. The answer is a count or
    the documents' names, each cited; no model call. Its confidence is read from how the
    question was read (``nodes.shared.confidence.catalog_signals``: words left unread, no
    document matched, a kind told by name, a topic…) by the model fitted on the catalog
    calibration sets, else the share of right catalog answers
    (``nodes.shared.confidence.tool_confidence``); the signals are the state's
    ``tool_signals``.
    """
    ctx = context_of(runtime)
    plan = state.get("plan")
    if plan is None or plan["tool"] != "catalog":
        raise ValueError("query_catalog answers choose_tool's catalog plan, and there is none")
    query = CatalogQuery.from_json(plan["query"])
    docs = select(query, services.documents() if services.documents else [])
    if query.topic:
        hits = services.retriever.search(query.topic, ctx.top_k * 3)
        covering = {
            h.metadata.get("doc_id")
            for h in hits
            if h.metadata.get("score", 0) >= ctx.min_similarity
        }
        docs = [d for d in docs if d.get("doc_id") in covering or named_by(query.topic, d)]
    docs.sort(key=document_name)
    sources = [
        Source(id=str(d.get("doc_id")), source=str(d.get("label") or d.get("doc_id")))
        for d in docs[:MAX_SOURCES]
    ]
    answer = catalog_answer(query, [document_name(d) for d in docs])
    measured = catalog_signals(question_of(state), query, len(docs))
    return {
        "answer": answer,
        "sources": sources,
        "confidence": tool_confidence("catalog", measured),
        "answer_kind": "catalog",
        "tool_signals": measured,
    }
