"""rewrite_query: turn the question into a search query (on a retry, a different one)."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from crag.llm import complete
from crag.services import services_for
from graph.context import Context
from graph.state import RAGState
from nodes.common import context_of, render

MAX_QUERY_CHARS = 300


def clean_query(text: str) -> str:
    """First non-empty line of the model's reply, without labels or quotes, bounded in length."""
    for line in text.splitlines():
        line = re.sub(r"^\s*(search\s+)?query\s*:\s*", "", line, flags=re.I).strip().strip("\"'`")
        if line:
            return line[:MAX_QUERY_CHARS]
    return ""


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
        question=state["question"],
        previous_queries="\n".join(f"- {q}" for q in previous) or "(none)",
        feedback=state.get("feedback") or "(none)",
    )
    query = clean_query(complete(services_for(ctx).llm, prompt)) or state["question"]
    return {"rewritten_query": query, **recorded}
