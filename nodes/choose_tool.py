"""choose_tool: what a question's pass reads — its catalog, its tables, or its text."""

from __future__ import annotations

import datetime as dt

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.errors import CragError
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Update
from crag_core.text.catalog import catalog_query, question_scope
from crag_core.text.sql import table_plan, text_names
from crag_core.text.whole_document import asks_about_a_document, document_request
from nodes.common import question_of, reports


@reports(lambda u: f"{u['tool']}: {u['plan_reason']}")
def choose_tool(state: RAGState, runtime: Runtime[Context], services: Services) -> Update:
    """``document``, ``catalog`` or ``table`` for a question they answer; else ``search``.

    ``document`` when it asks for a summary of one document it names, or what that document
    says (``crag_core.text.whole_document.document_request``).

    ``catalog`` when it asks how many or which documents (of a type, from a date, on a
    topic: ``crag_core.text.catalog.catalog_query``).

    ``table`` when it names a column of a table and asks for a computation over rows or names
    a row of it. Decided by rules on the tables' catalog (``crag_core.text.sql.table_plan``),
    no model call: a question that names no column is never sent to SQL, nor one about a text
    it names (``crag_core.text.sql.text_names``) by that text's words. A catalog that
    cannot be read sends the question to text search with a warning.

    A search limited by the question to some documents ("according to the PDFs", "in the
    files modified in 2024") carries that filter (``where``, crag's filter language:
    ``crag_core.text.catalog.question_scope``) to ``retrieve``.
    """
    question = question_of(state)
    if not context_of(runtime).tools:
        return {"tool": "search", "plan_reason": "tools are off"}
    chosen = choose(question, services)
    scope = question_scope(question, dt.date.today()) if chosen["tool"] == "search" else None
    if scope is None:
        return chosen
    reason = f"{chosen['plan_reason']}; only documents {scope.where} ({scope.said!r})"
    return chosen | {"where": scope.where, "plan_reason": reason}


def choose(question: str, services: Services) -> Update:
    """The tool for ``question`` and why (no scope filter): ``choose_tool``'s rules."""
    reads_documents = services.documents is not None and services.document_chunks is not None
    if reads_documents and asks_about_a_document(question):
        assert services.documents is not None
        request = document_request(question, services.documents())
        if request is not None:
            name = request.document.get("label") or request.document.get("title")
            return {"tool": "document", "plan_reason": f"it asks about the whole of {name}"}
    if services.documents is not None:
        query = catalog_query(question, dt.date.today())
        if query is not None:
            asked = " ".join(query.said) or "any"
            reason = f"it asks {query.kind} of documents: {asked}"
            return {"tool": "catalog", "plan_reason": reason, "where": query.where}
    if services.tables is None:
        return {"tool": "search", "plan_reason": "no table store"}
    try:
        catalog = services.tables.catalog()
    except CragError as exc:
        return {
            "tool": "search",
            "plan_reason": "the tables could not be read",
            "warnings": [f"The collection's tables could not be read: {exc}"],
        }
    texts = text_names(question, services.documents(), catalog) if services.documents else []
    use, reason = table_plan(question, catalog, texts)
    return {"tool": "table" if use else "search", "plan_reason": reason}
