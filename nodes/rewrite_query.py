"""rewrite_query: turn the question into a search query (on a retry, a different one)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from crag.llm import complete
from crag.services import services_for
from graph.context import Context
from graph.state import RAGState
from nodes.common import context_of, first_line, question_of, render


def rewrite_query(state: RAGState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write a search query for the question; on a retry, use the feedback to change it.

    The query is used for retrieval only: the question itself is what gets answered and graded.
    """
    ctx = context_of(runtime)
    previous = [a["query"] for a in state.get("attempts") or [] if a["query"]]
    prompt, recorded = render(
        state,
        ctx,
        "rewrite_query",
        question=question_of(state),
        previous_queries="\n".join(f"- {q}" for q in previous) or "(none)",
        feedback=state.get("feedback") or "(none)",
    )
    query = first_line(complete(services_for(ctx).llm, prompt)) or question_of(state)
    return {"rewritten_query": query, **recorded}
