"""web_search: add web results when the knowledge base was not enough."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from crag_core.clients.services import Services
from crag_core.errors import WebSearchError
from crag_core.schema.context import Context, context_of
from crag_core.schema.state import PassState, PassUpdate
from crag_core.text.words import plural
from nodes.shared.common import question_of, reports

OFF_WARNING = "Web search is off; the answer uses the knowledge base only."


def describe(update: Mapping[str, Any]) -> str:
    """How many results came back, or why none did."""
    if "web_results" in update:
        return plural(len(update["web_results"]), "result")
    return str((update.get("warnings") or ["no results"])[-1])


@reports(describe)
def web_search(state: PassState, runtime: Runtime[Context], services: Services) -> PassUpdate:
    """Search the web; a failure becomes a warning, never a document.

    The query is the rewrite on a retry, else the question. The pass is marked as having
    searched the web either way, so it searches at most once.
    """
    ctx = context_of(runtime)
    provider = services.web_search
    if provider is None:
        return {"web_searched": True, "warnings": [OFF_WARNING]}
    query = state.get("rewritten_query") or question_of(state)
    try:
        results = provider.search(query, ctx.web_results)
    except WebSearchError as exc:
        warning = f"Web search failed, so the answer uses the knowledge base only: {exc}"
        return {"web_searched": True, "warnings": [warning]}
    return {"web_results": results, "web_searched": True, "web_search_used": True}
