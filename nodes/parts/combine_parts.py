"""combine_parts: one answer for a question asked in parts, from every part's answer."""

from __future__ import annotations

from langgraph.runtime import Runtime

from crag_core.schema.context import Context, context_of
from crag_core.schema.state import RAGState, Update
from nodes.parts.collect_part import chain_cut, combined, combined_confidence
from nodes.shared.answers import answer_summary
from nodes.shared.common import reports


@reports(answer_summary)
def combine_parts(state: RAGState, runtime: Runtime[Context]) -> Update:
    """Join the parts' answers; each part's pass checked its own.

    The answer is ``nodes.parts.collect_part.combined``'s. The confidence is
    ``nodes.parts.collect_part.combined_confidence``; the web and the retries count if any part used
    them. A chain its time stopped (``chain_cut``) says so in a warning.
    """
    parts = state.get("parts") or []
    answer, sources = combined(state)
    return {
        "warnings": chain_cut(state, context_of(runtime)),
        "answer": answer,
        "sources": sources,
        "confidence": combined_confidence(state, answer),
        "web_search_used": any(p["web_search_used"] for p in parts),
        "retry_count": max((p["retry_count"] for p in parts), default=0),
    }
