"""combine_parts: one answer for a question asked in parts, from every part's answer."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.schema.context import Context
from crag_core.schema.state import RAGState, Update
from nodes.answers import answer_summary
from nodes.common import reports
from nodes.parts import combined, combined_confidence


@reports(answer_summary)
def combine_parts(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Join the parts' answers (``nodes.parts.combined``); each part's pass checked its own.

    The confidence is ``nodes.parts.combined_confidence``; the web and the retries count if
    any part used them.
    """
    parts = state.get("parts") or []
    answer, sources = combined(state)
    return {
        "answer": answer,
        "sources": sources,
        "confidence": combined_confidence(state, answer),
        "web_search_used": any(p["web_search_used"] for p in parts),
        "retry_count": max((p["retry_count"] for p in parts), default=0),
    }
