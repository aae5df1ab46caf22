"""choose_tool: what a question's pass reads — its catalog, its tables, or its text."""

from __future__ import annotations

import datetime as dt
from typing import cast

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.errors import CragError
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import (
    CatalogAsked,
    CatalogPlan,
    DocumentPlan,
    LoopPlan,
    PassState,
    PassUpdate,
    Plan,
    SearchPlan,
    TableAsked,
    TablePlan,
)
from crag_core.text.catalog import catalog_query, question_scope
from crag_core.text.sql import asked_matches, table_plan, text_names
from crag_core.text.whole_document import asks_about_a_document, document_request
from nodes.shared.common import question_of, reports
from nodes.tools.table_keys import with_identifiers


@reports(lambda u: f"{u['plan']['tool']}: {u['plan']['reason']}")
def choose_tool(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """The pass's ``plan``: the tool for the question, and what the tool reads.

    The tool is ``document``, ``catalog`` or ``table`` for a question they answer; else
    ``search``. The plan holds what its tool reads, so no tool parses the question again.

    ``document`` when it asks for a summary of one document it names, or what that document
    says (``crag_core.text.whole_document.document_request``).

    ``catalog`` when it asks how many or which documents (of a type, from a date, on a
    topic: ``crag_core.text.catalog.catalog_query``, its dates resolved against today).

    ``table`` when it names a column of a table and asks for a computation over rows or names
    a row of it. Decided by rules on the tables' catalog (``crag_core.text.sql.table_plan``;
    a row named by its identifier, "order 10922", looked up: ``table_keys.with_identifiers``),
    no model call: a question that names no column is never sent to SQL, nor one about a text
    it names (``crag_core.text.sql.text_names``) by that text's words. The plan lists the
    tables it names best and what of each (``crag_core.text.sql.asked_matches``). A catalog
    that cannot be read sends the question to text search with a warning.

    With ``planner`` ``loop`` every question goes to the loop (``agent``), no rule asked; with
    ``auto`` the rules decide, and the loop takes only the table questions no query of theirs
    answered (``route_after_table``). A question the rules send to text search is answered by
    search, grading and generation in either planner: on 40 calibration questions of
    documentation pages beside tables the loop answered 5 right and 7 wrong, they 25 and 1
    (docs/benchmarks/loop/tenth-run/calibration). Under ``auto`` one that names a table's
    listed values (the plan's ``rows``) goes to the loop when the text has no answer
    (``route_after_answer``): on the calibration questions it touched, 4 right and 2 wrong
    where all had been "I don't know" (docs/benchmarks/tools, cal-765c3b9/text-loop).

    A search limited by the question to some documents ("according to the PDFs", "in the
    files modified in 2024") carries that filter (``where``, crag's filter language:
    ``crag_core.text.catalog.question_scope``) to ``retrieve``.
    """
    question = question_of(state)
    ctx = context_of(runtime)
    if not ctx.tools:
        return {"plan": SearchPlan(tool="search", reason="tools are off", where="")}
    if ctx.planner == "loop":
        return {"plan": LoopPlan(tool="loop", reason="planner loop: the model chooses the tools")}
    plan, warnings = choose(question, services)
    scope = question_scope(question, dt.date.today()) if plan["tool"] == "search" else None
    if scope is not None:
        reason = f"{plan['reason']}; only documents {scope.where} ({scope.said!r})"
        plan = SearchPlan(tool="search", reason=reason, where=scope.where)
    return {"plan": plan, "warnings": warnings} if warnings else {"plan": plan}


def choose(question: str, services: Services) -> tuple[Plan, list[str]]:
    """The plan for ``question`` (no scope filter), and any warning: ``choose_tool``'s rules."""
    reads_documents = services.documents is not None and services.document_chunks is not None
    if reads_documents and asks_about_a_document(question):
        assert services.documents is not None
        request = document_request(question, services.documents())
        if request is not None:
            doc = request.document
            name = str(doc.get("label") or doc.get("title") or doc["doc_id"])
            return (
                DocumentPlan(
                    tool="document",
                    reason=f"it asks about the whole of {name}",
                    doc_id=str(doc["doc_id"]),
                    name=str(doc.get("label") or doc["doc_id"]),
                    topic=request.topic,
                ),
                [],
            )
    if services.documents is not None:
        query = catalog_query(question, dt.date.today())
        if query is not None:
            asked = " ".join(query.said) or "any"
            return (
                CatalogPlan(
                    tool="catalog",
                    reason=f"it asks {query.kind} of documents: {asked}",
                    query=cast(CatalogAsked, query.as_json()),
                    where=query.where,
                ),
                [],
            )
    if services.tables is None:
        return _search("no table store"), []
    try:
        catalog = with_identifiers(question, services.tables.catalog(), services.tables)
    except CragError as exc:
        warning = f"The collection's tables could not be read: {exc}"
        return _search("the tables could not be read"), [warning]
    texts = text_names(question, services.documents(), catalog) if services.documents else []
    use, reason = table_plan(question, catalog, texts)
    if not use:
        rows = [] if texts else [m.table.name for m in asked_matches(question, catalog) if m.values]
        return (
            SearchPlan(tool="search", reason=reason, where="", rows=rows)
            if rows
            else _search(reason)
        ), []
    tables = [
        TableAsked(name=m.table.name, columns=list(m.columns), values=list(m.values))
        for m in asked_matches(question, catalog)
    ]
    return TablePlan(tool="table", reason=reason, tables=tables), []


def _search(reason: str) -> SearchPlan:
    return SearchPlan(tool="search", reason=reason, where="")
